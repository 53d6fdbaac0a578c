"""Kubernetes version lifecycles per distribution, and the `support` a
cluster reads: computed against today's date whenever it is read, never
stored, so tomorrow's answer is tomorrow's.

The data (inventory/core/data/kubernetes-lifecycle.json) comes from the
endoflife.date project, with its commit and date in the file; it is read
once, at import, from the package: nothing is fetched at run time.
`scripts/refresh-lifecycle` rewrites it (inventory/cli/refresh_lifecycle.py).

The design, and why: docs/design/lifecycle.md"""
import datetime
import functools
import json
import time
from dataclasses import dataclass
from pathlib import Path

from inventory.core.versions import parts_key, version_parts

# Stored beside each cluster: its platform's provider, the lifecycle that
# provider follows, and its version's sort key (filters and summaries use them).
PROVIDER_FIELD, DISTRIBUTION_FIELD, VERSION_KEY_FIELD = "_provider", "_distribution", "_version_key"
# ... and its support dates, which its order keys are made of (`order_by`):
# all_ends_on as the data says it, ends_on for the day they were last worked
# out (kept up to date as the days pass: inventory/resources/clusters/store.py)
SUPPORT_DATE_FIELDS = {"support.ends_on": "_support_ends_on",
                       "support.all_ends_on": "_support_all_ends_on"}
DATA_PATH = Path(__file__).parent / "data" / "kubernetes-lifecycle.json"
ENDING_WITHIN = datetime.timedelta(days=90)
DISTRIBUTIONS = ("upstream", "eks", "gke", "aks")
STATUSES = ("supported", "ending", "extended", "unsupported", "unknown")
_MANAGED = frozenset({"eks", "gke", "aks"})


_TODAY = (None, None)  # (days since the epoch, that date), one tuple: a page asks once per record


def today():
    """The day support is computed for: today, in UTC."""
    global _TODAY
    number, day = _TODAY
    if number != int(time.time() // 86400):
        number = int(time.time() // 86400)
        day = datetime.datetime.fromtimestamp(number * 86400, datetime.timezone.utc).date()
        _TODAY = (number, day)
    return day


def distribution_of(provider):
    """The lifecycle a platform's `control_plane.provider` follows."""
    name = provider.strip().lower() if isinstance(provider, str) else ""
    return name if name in _MANAGED else "upstream"


@functools.lru_cache(maxsize=4096)  # a page asks it of each record: few versions, many times
def minor_of(version):
    """`1.31` of `v1.31.2-eks-1234`, `1.31.2`, `1.31`; None if not a version."""
    parts = version_parts(version)
    return None if parts is None else f"{parts[0]}.{parts[1]}"


def _day(text):
    return None if text is None else datetime.date.fromisoformat(text)


@dataclass(frozen=True)
class Cycle:
    """One minor version's dates in one distribution."""

    minor: str
    released_on: datetime.date
    standard_ends: datetime.date | None
    extended_ends: datetime.date | None

    @property
    def all_ends(self):
        """When support of any kind ends: extended support's end where there
        is one, else standard's (None: not announced)."""
        return self.extended_ends or self.standard_ends

    def ends_on(self, day):
        return self.status(day)[1]

    def status(self, day):
        """(status, ends_on) on `day`."""
        if self.standard_ends is None:
            return "supported", None
        if day < self.standard_ends - ENDING_WITHIN:
            return "supported", self.standard_ends - ENDING_WITHIN
        if day < self.standard_ends:
            return "ending", self.standard_ends
        if self.extended_ends is not None and day < self.extended_ends:
            return "extended", self.extended_ends
        return "unsupported", None


def _minor_range(minor):
    """The version-key range [low, high) of every version of a minor."""
    major, number = (int(part) for part in minor.split("."))
    return parts_key((major, number, 0)), parts_key((major, number + 1, 0))


class Lifecycles:
    """The lifecycle data, by distribution and minor version."""

    def __init__(self, document):
        source = document["source"]
        self.source = source
        self.as_of = f"{source['name']} {source['date']} ({source['commit'][:12]})"
        self.cycles = {
            distribution: {minor: Cycle(minor, _day(dates["released_on"]),
                                        _day(dates["standard_support_ends_on"]),
                                        _day(dates["extended_support_ends_on"]))
                           for minor, dates in document["distributions"][distribution].items()}
            for distribution in DISTRIBUTIONS}

    @classmethod
    def load(cls, path=DATA_PATH):
        return cls(json.loads(Path(path).read_text("utf-8")))

    _SUPPORTS_KEPT = 4096  # (distribution, minor) pairs of one day; past it, begun again

    def support(self, distribution, version, day):
        """The `support` object of a cluster of `distribution` at `version`
        on `day`: a new one, worked out once per minor version and day (a
        page of clusters shares a few)."""
        minor = minor_of(version)
        kept_day, kept = self.__dict__.get("_supports", (None, {}))
        if kept_day != day or len(kept) >= self._SUPPORTS_KEPT:
            kept = {}
            self._supports = (day, kept)  # one tuple: no thread sees one day's with another's
        support = kept.get((distribution, minor))
        if support is None:
            support = kept[(distribution, minor)] = self._support(distribution, minor, day)
        return {**support, "lifecycle": {**support["lifecycle"]}}

    def _support(self, distribution, minor, day):
        cycle = self.cycles[distribution].get(minor)
        status, ends_on = ("unknown", None) if cycle is None else cycle.status(day)
        all_ends = cycle and cycle.all_ends
        return {
            "status": status,
            "ends_on": None if ends_on is None else ends_on.isoformat(),
            # past every support (`unsupported`), the day it ended
            "all_ends_on": all_ends.isoformat() if all_ends else None,
            "lifecycle": {
                "distribution": distribution,
                "minor": minor,
                "released_on": cycle and cycle.released_on.isoformat(),
                "standard_support_ends_on": cycle and cycle.standard_ends
                and cycle.standard_ends.isoformat(),
                "extended_support_ends_on": cycle and cycle.extended_ends
                and cycle.extended_ends.isoformat(),
                "source": self.as_of,
            },
        }

    def support_dates(self, distribution, version, day):
        """{stored field: ISO day or None} of the support dates (see
        SUPPORT_DATE_FIELDS) of a cluster of `distribution` at `version` on `day`."""
        support = self.support(distribution, version, day)
        return {stored: support[field.removeprefix("support.")]
                for field, stored in SUPPORT_DATE_FIELDS.items()}

    def status_of_minor(self, distribution, minor, day):
        """The status of a minor version (`"1.31"`, or None) in a distribution on `day`."""
        cycle = self.cycles[distribution].get(minor)
        return "unknown" if cycle is None else cycle.status(day)[0]

    def version_ranges(self, distribution, statuses, day):
        """[(low, high)] version-key ranges (low inclusive, high exclusive;
        None: unbounded) holding exactly the versions of `distribution`
        whose status on `day` is one of `statuses`: adjacent minors are
        merged, and `unknown` is everything between and around the known
        minors."""
        return self.version_ranges_where(
            distribution, lambda cycle: (cycle.status(day)[0] if cycle else "unknown")
            in statuses)

    def version_ranges_where(self, distribution, keep):
        """The version-key ranges, as `version_ranges` makes them, of the
        minors of `distribution` whose Cycle `keep` keeps (it is given None
        for the versions not in the data)."""
        bounds = sorted(_minor_range(minor) + (cycle,)
                        for minor, cycle in self.cycles[distribution].items())
        pieces, position = [], None  # (low, high, cycle) covering every key in order
        for low, high, cycle in bounds:
            if position != low:
                pieces.append((position, low, None))
            pieces.append((low, high, cycle))
            position = high
        pieces.append((position, None, None))
        ranges = []
        for low, high, cycle in pieces:
            if not keep(cycle):
                continue
            if ranges and ranges[-1][1] == low and low is not None:
                ranges[-1] = (ranges[-1][0], high)
            else:
                ranges.append((low, high))
        return ranges


LIFECYCLES = Lifecycles.load()
