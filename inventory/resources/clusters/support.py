"""The clusters' computed support fields in filters: `support.status`,
`support.ends_on` and `support.all_ends_on` are worked out from a cluster's
distribution and version, for today, so they are compiled, for today, into
ranges of version keys per distribution (an index serves them). The
ClusterStore hands these to its filter compiler (inventory.store.query)."""
import operator
import re
from datetime import date, timedelta

from inventory.core.filtering import PRESENT, filter_error
from inventory.core.lifecycle import (
    DISTRIBUTION_FIELD,
    DISTRIBUTIONS,
    LIFECYCLES,
    STATUSES,
    VERSION_KEY_FIELD,
    today,
)

_NOTHING = {"_id": {"$exists": False}}  # every document has an `_id`
_DAY_COMPARE = {"=": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                ">=": operator.ge}
_DAYS_FROM_TODAY = re.compile(r"^([+-])P(?!$)(?:(\d{1,5})W)?(?:(\d{1,5})D)?$")


def _day_value(node):
    """The day a support date is compared with: `"2027-01-31"`, or a signed
    ISO 8601 duration in weeks and days from today (`"+P60D"`, `"-P1W"`)."""
    if isinstance(node.value, str):
        relative = _DAYS_FROM_TODAY.match(node.value)
        if relative is not None:
            sign, weeks, days = relative.groups()
            offset = timedelta(weeks=int(weeks or 0), days=int(days or 0))
            try:
                return today() + offset if sign == "+" else today() - offset
            except OverflowError:  # before year 1 or after 9999: no calendar's day
                raise filter_error(f"{node.field}: {node.value!r} from today is not a day of "
                                   "the calendar (years 1 to 9999)", node.text,
                                   node.position) from None
        try:
            if len(node.value) == 10:
                return date.fromisoformat(node.value)
        except ValueError:
            pass
    raise filter_error(f"{node.field} is a day: {node.value!r} is not one; write "
                       '"2027-01-31", or "+P60D" for days from today', node.text, node.position)


def _in_version_ranges(ranges_of):
    """The query of the clusters whose version key lies in one of
    `ranges_of(distribution)` for their distribution."""
    clauses = []
    for distribution in DISTRIBUTIONS:
        for low, high in ranges_of(distribution):
            bounds = {op: key for op, key in (("$gte", low), ("$lt", high)) if key}
            clauses.append({DISTRIBUTION_FIELD: {"$eq": distribution},
                            **({VERSION_KEY_FIELD: bounds} if bounds else {})})
    if not clauses:
        return _NOTHING
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


def clusters_where(keep):
    """The query of the clusters whose minor's Cycle in their distribution
    `keep` keeps (it is given None for versions not in the data); None
    when it keeps none."""
    query = _in_version_ranges(
        lambda distribution: LIFECYCLES.version_ranges_where(distribution, keep))
    return None if query is _NOTHING else query


def support_status_query(node):
    """`support.status` compared with a status: for each distribution, the
    ranges of version keys whose minor has that status today. The rest of
    the filter, the page's walk and its bound work as for any field."""
    if node.value is PRESENT:
        raise filter_error("support.status is always present; compare it with a status",
                           node.text, node.position)
    if node.op not in ("=", "!=", ":") or not isinstance(node.value, str):
        raise filter_error("support.status is compared with = or != and a quoted status "
                           f"({', '.join(STATUSES)})", node.text, node.position)
    if node.prefix:
        wanted = {status for status in STATUSES if status.startswith(node.value)}
    elif node.value in STATUSES:
        wanted = {node.value}
    else:
        raise filter_error(f"{node.value!r} is not a support status ("
                           f"{', '.join(STATUSES)})", node.text, node.position)
    if node.op == "!=":
        wanted = set(STATUSES) - wanted
    day = today()
    return _in_version_ranges(
        lambda distribution: LIFECYCLES.version_ranges(distribution, wanted, day))


def support_date_query(node):
    """`support.ends_on` (for today) and `support.all_ends_on` compared with
    a day: per distribution, the ranges of version keys whose minor's date
    passes the comparison. A version without the date (not in the data, or
    no end announced) compares as null: only `!=` and `NOT ...:*` find it."""
    field = node.field.removeprefix("support.")
    if node.value is PRESENT:
        passes = lambda ends: ends is not None  # noqa: E731
    else:
        if node.op == ":" or node.prefix:
            raise filter_error(f"{node.field} compares with = != < <= > >= and a day "
                               '("2027-01-31", or "+P60D": days from today)',
                               node.text, node.position)
        wanted = _day_value(node)
        if node.op == "!=":
            passes = lambda ends: ends != wanted  # noqa: E731
        else:
            compare = _DAY_COMPARE[node.op]
            passes = lambda ends: ends is not None and compare(ends, wanted)  # noqa: E731
    day = today()

    def keep(cycle):
        ends = None if cycle is None else (
            cycle.ends_on(day) if field == "ends_on" else cycle.all_ends)
        return passes(ends)
    return _in_version_ranges(
        lambda distribution: LIFECYCLES.version_ranges_where(distribution, keep))


# computed field -> the function compiling a comparison of it into a query
SUPPORT_FILTERS = {"support.status": support_status_query,
                   "support.ends_on": support_date_query,
                   "support.all_ends_on": support_date_query}
