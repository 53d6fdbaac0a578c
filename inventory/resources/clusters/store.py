"""KubeClusters: versions kept with a sortable key, support worked out per day
(and its dates kept for `order_by`, day by day), summaries.

The design, and why: docs/design/lifecycle.md"""
import heapq
from datetime import date, timedelta
from typing import NamedTuple

import orjson

from inventory.core import readiness
from inventory.core.caps import OBSERVED_SCANS_KEPT, OBSERVED_SCANS_SPARE
from inventory.core.errors import (
    Contended,
    InvalidRecord,
    InvalidReference,
)
from inventory.core.grouping import MAX_GROUPS, label_key
from inventory.core.ids import new_id
from inventory.core.labels import MAX_LABELS
from inventory.core.lifecycle import (
    DISTRIBUTION_FIELD,
    LIFECYCLES,
    PROVIDER_FIELD,
    STATUSES,
    SUPPORT_DATE_FIELDS,
    VERSION_KEY_FIELD,
    distribution_of,
    minor_of,
    today,
)
from inventory.core.rollouts import standing
from inventory.core.turns import Turns
from inventory.core.versions import version_key, version_parts
from inventory.resources.clusters.spec import (
    OBSERVED_VERSION_KEY_FIELD,
    ROLLOUT_STANDING_FIELD,
    SPEC,
)
from inventory.resources.clusters.support import SUPPORT_FILTERS, clusters_where
from inventory.store.base import ResourceStore
from inventory.store.changes import changes_between
from inventory.store.document_keys import api_map, stored_key, stored_map
from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.pages import all_of
from inventory.store.records import LIVE, REVISION, new_revision
from inventory.store.stored_json import StoredJSON
from inventory.store.updates import UPDATE_ATTEMPTS

# What a cluster keeps of its scans (inventory/core/readiness.py)
# and its readiness' checks, each as one JSON string: read whole, never
# queried, and one string costs the embedded store a fraction of the
# memory (and start-up) of the objects it holds (docs/design/readiness.md);
# and the failing checks' keys `:blockers` counts clusters by, sorted, as
# one JSON string too (equal lists, equal strings: they group alike): a
# list in a cluster written since the start is one more object the cyclic
# garbage collector walks in each full collection for as long as the
# process runs, and 600 bytes more than the string (a list stored before
# is still counted).
OBSERVATIONS_FIELD, CHECKS_FIELD, BLOCKERS_FIELD = "_observations", "_checks", "_blockers"
# The keys of the cluster's scans that keep what they observed, in key
# order: kept in the cluster's own compare-and-swap, so by every process
# alike, and let go of past the newest OBSERVED_SCANS_KEPT once
# OBSERVED_SCANS_SPARE more have joined (record_scan)
OBSERVED_SCANS_FIELD = "_observed_scans"
# The settings document saying which day and lifecycle data the clusters'
# stored support dates are for.
SUPPORT_DATES = "support-dates"
REWRITE_SLICE = 500  # clusters read at once by a pass over them (_each_in_slices)


class ClusterStore(ResourceStore):
    spec = SPEC
    # worked out from the version (and distribution, for today; and scans):
    # an update's event lists the version, and of readiness its status
    computed_fields = ("support", "readiness.target", "readiness.checks")
    computed_filters = SUPPORT_FILTERS
    backfilled = ("distribution", "readiness", "support dates")  # add_missing_fields
    key_field = "name"
    scope_field = "organization"
    immutable_fields = ("name", "platform")
    platforms = None  # the parent collection, set by Store

    def __init__(self, db):
        super().__init__(db)
        self.settings = db.settings
        # (day, lifecycle data) the stored support dates were last seen to be
        # for, by this process: looked up once a day, not on every page
        self._support_dates_for = None

    def stored_name(self, field):
        # versions compare through a sortable key kept beside them, support
        # dates through the dates kept for their order keys
        if field == "version":
            return VERSION_KEY_FIELD
        if field == "observed.version":
            return OBSERVED_VERSION_KEY_FIELD
        return SUPPORT_DATE_FIELDS.get(field) or super().stored_name(field)

    # -- support dates in order keys ----------------------------------------
    # `order_by=support.ends_on` and `support.all_ends_on` walk order keys
    # like any ordering; their dates are kept in the record, worked out for
    # today from its distribution and version by every write of its order
    # keys, and rewritten as the days pass (refresh_support_dates).

    def order_fields(self, doc, changed=None):
        """The order keys of `doc`, with its support dates for today when
        they are among them (their stored fields too, so that the keys and
        the dates are always written together)."""
        dated = None
        if changed is None or "version" in changed or not SUPPORT_DATE_FIELDS.keys().isdisjoint(
                changed):
            dated = LIFECYCLES.support_dates(doc.get(DISTRIBUTION_FIELD, "upstream"),
                                             doc["version"], today())
            doc = {**doc, **dated}
            changed = None if changed is None else {*changed, *SUPPORT_DATE_FIELDS}
        fields = super().order_fields(doc, changed)
        return fields if dated is None else {**dated, **fields}

    def list(self, request):
        if request.ordering is not None and not SUPPORT_DATE_FIELDS.keys().isdisjoint(
                name for name, _ in request.ordering.fields):
            self.refresh_support_dates()
        return super().list(request)

    def refresh_support_dates(self, day=None):
        """Make the stored support dates and their order keys those of `day`
        (today) and of the lifecycle data in use; how many clusters changed.

        The settings document SUPPORT_DATES says which day and data the
        stored dates are for. With other data (a release with refreshed
        lifecycle data), every cluster is looked at; on a later day, only
        the clusters whose minor's `ends_on` differs between that day (less
        one: a write in flight across its midnight may have used the day
        before) and `day`: a few minors a year, each on the days its status
        changes. Idempotent: processes that refresh at once write the same."""
        day = day or today()
        wanted = {"day": day.isoformat(), "data": LIFECYCLES.as_of}
        if self._support_dates_for == wanted:
            return 0
        kept = self.settings.find_one({"_id": SUPPORT_DATES}) or {}
        if kept.get("data") != wanted["data"] or not kept.get("day"):
            done = self.rewrite_support_dates({}, day)
        elif kept["day"] != wanted["day"]:
            before = date.fromisoformat(kept["day"]) - timedelta(days=1)
            moved = clusters_where(
                lambda cycle: cycle is not None and cycle.ends_on(before) != cycle.ends_on(day))
            done = 0 if moved is None else self.rewrite_support_dates(moved, day)
        else:
            done = 0
        self.settings.update_one({"_id": SUPPORT_DATES}, {"$set": wanted}, upsert=True)
        self._support_dates_for = wanted
        return done

    def rewrite_support_dates(self, query, day):
        """Write the support dates of `day`, and the order keys made of them,
        into the clusters matching `query` whose stored ones differ; how
        many. Each write is conditioned on the version it was worked out
        from; a write that changed it meanwhile wrote its own."""
        parts = [path for _, _, names, key_parts in self._order_keys
                 if not names.isdisjoint(SUPPORT_DATE_FIELDS) for path, _, _ in key_parts]
        fields = [field for ordering, field in self.kept_orderings()
                  if not SUPPORT_DATE_FIELDS.keys().isdisjoint(n for n, _ in ordering.fields)]
        projection = dict.fromkeys(["version", DISTRIBUTION_FIELD, *SUPPORT_DATE_FIELDS.values(),
                                    *parts, *fields], 1)
        done = 0
        for doc in self._each_in_slices(query, projection):
            dated = LIFECYCLES.support_dates(doc.get(DISTRIBUTION_FIELD, "upstream"),
                                             doc["version"], day)
            written = {**dated, **super().order_fields({**doc, **dated}, SUPPORT_DATE_FIELDS)}
            if any(field not in doc or doc[field] != value for field, value in written.items()):
                done += self.collection.update_one(
                    {"_id": doc["_id"], "version": doc["version"]},
                    {"$set": written}).modified_count
        return done

    def _each_in_slices(self, query, projection):
        """Each cluster matching `query` (its `projection`), in key order,
        read REWRITE_SLICE at a time (no read holds the store for a whole
        pass: a rewrite's or a backfill's), others let in between two
        (Turns); read first, then handed out: a cursor of the embedded
        store (mongomock) works out its results again after each write."""
        turns, after = Turns(), None
        while True:
            docs = list(self.collection.find(
                all_of(query, None if after is None else {"_id": {"$gt": after}}), projection,
                sort=[("_id", 1)], limit=REWRITE_SLICE))
            for doc in docs:
                yield doc
                turns.check()
            if len(docs) < REWRITE_SLICE:
                return
            after = docs[-1]["_id"]

    def key_filter(self, key):
        # Addressable by slug or by `k8scl_` id; slugs cannot contain "_".
        return {"id": key} if key.startswith("k8scl_") else {"_id": key}

    # Label keys are stored escaped (inventory.store.document_keys): a key
    # with a `.` (`app.kubernetes.io/name`) cannot be a field name as it is.
    # Keys without `.`, `$` or `%` are stored as they are, as they always were.

    def to_api(self, doc, day=None):
        return self._record(doc, day, orjson.loads)

    def to_answer(self, doc):
        # the checks as the text they are stored as: a page embeds it as it is
        return self._record(doc, None, StoredJSON)

    def _record(self, doc, day, checks):
        """The record `doc` holds, its readiness checks made of their stored
        text by `checks`."""
        record = super().to_api(doc)
        labels = record.get("labels")
        if labels:
            record["labels"] = api_map(labels)
        support = LIFECYCLES.support(doc.get(DISTRIBUTION_FIELD, "upstream"), doc["version"],
                                     day or today())
        record["support"] = support
        if CHECKS_FIELD in doc:  # `readiness` holds the target and status, for queries
            record["readiness"]["checks"] = checks(doc[CHECKS_FIELD])
        else:  # stored before readiness: `create-indexes` stores it
            record["readiness"] = readiness.assess(doc["version"], None)
        # The answer changes with the day as well as with writes: so does its
        # ETag. If-Match compares the stored part only (see stored_revisions).
        record.revision = f"{record.revision}-{support['status']}-{support['ends_on']}"
        return record

    @staticmethod
    def stored_revisions(revisions):
        """The stored revisions of ETags (`<revision>-<status>-<ends_on>`)."""
        # (an empty tag, `If-Match: ""`, comes as None: it matches no revision)
        return None if revisions is None else [(tag or "").split("-", 1)[0]
                                               for tag in revisions]

    def distribution_fields(self, platform):
        """What a cluster keeps of its platform: the provider (summaries
        count by it) and the lifecycle it follows (filters select by it)."""
        provider = platform["control_plane"]["provider"]
        return {PROVIDER_FIELD: provider, DISTRIBUTION_FIELD: distribution_of(provider)}

    def add_missing_fields(self):
        """Give clusters written before lifecycles existed their platform's
        provider, those written before readiness theirs, and those written
        before their support dates were kept (or with other lifecycle data)
        their dates; how many."""
        done = self.add_missing_readiness()
        for doc in self.collection.find({DISTRIBUTION_FIELD: {"$exists": False}},
                                        {"_id": 1, "platform": 1}):
            platform = self.platforms.collection.find_one({"_id": doc["platform"]})
            if platform is not None:
                done += self.collection.update_one(
                    {"_id": doc["_id"], DISTRIBUTION_FIELD: {"$exists": False}},
                    {"$set": self.distribution_fields(platform)}).modified_count
        self._support_dates_for = None  # looked at again, whatever this process saw
        done += self.rewrite_support_dates(
            {SUPPORT_DATE_FIELDS["support.all_ends_on"]: {"$exists": False}}, today())
        return done + self.refresh_support_dates()

    def create(self, body, principal, scope=None):
        platform_name = body["platform"]
        platform = self.platforms.find_doc(platform_name, scope)
        if platform is None:
            raise InvalidReference("platform", "No such platform.", platform_name)
        doc = {"_id": body["name"], "id": new_id("k8scl"),
               **{k: v for k, v in body.items() if k != "name"},
               **({"labels": stored_map(body["labels"])} if body.get("labels") else {}),
               "organization": platform["organization"], **self.audit_new(principal),
               VERSION_KEY_FIELD: version_key(body["version"]),
               **self.distribution_fields(platform)}
        doc.update(self.observed_fields(doc["version"], {}))
        self.check_merged(doc)
        self.insert_under(doc, self.platforms, platform, InvalidReference(
            "platform", "The platform was deleted meanwhile.", platform_name),
            org_id=platform["organization"])
        return self.to_api(doc)

    def identity(self, doc):
        # the `k8scl_` id is made anew for every cluster, even one reusing a
        # name; with the name, the write goes straight to the record by `_id`
        return {"_id": doc["_id"], "id": doc["id"]}

    def reservation_id(self, doc):
        return doc["id"]

    def check_merged(self, doc):
        super().check_merged(doc)
        if len(doc.get("labels") or {}) > MAX_LABELS:
            raise InvalidRecord("labels", f"At most {MAX_LABELS} labels; the change "
                                f"would leave {len(doc['labels'])}.")

    @staticmethod
    def observed_fields(version, observations):
        """The stored fields worked out from the cluster's recorded `version`
        and its `observations` (readiness.py): `observed`, `readiness`, and
        the keys kept for filters and `:blockers`."""
        observed, assessed = readiness.observed_of(observations), \
            readiness.assess(version, observations)
        return {OBSERVATIONS_FIELD: orjson.dumps(observations).decode(), "observed": observed,
                OBSERVED_VERSION_KEY_FIELD: observed and version_key(observed["version"]),
                "readiness": {"target": assessed["target"], "status": assessed["status"]},
                ROLLOUT_STANDING_FIELD: _standing_of(version, observed, assessed["status"]),
                CHECKS_FIELD: orjson.dumps(assessed["checks"]).decode(),
                BLOCKERS_FIELD: orjson.dumps(readiness.blocker_keys(assessed)).decode()}

    @staticmethod
    def observed_scans(observations):
        """The stored fields that say which scans observed what the cluster
        holds (`observed`'s scan, the observations' own)."""
        return {OBSERVATIONS_FIELD: orjson.dumps(observations).decode(),
                "observed": readiness.observed_of(observations)}

    def derived_fields(self, doc, sets):
        # a change of the recorded version changes the upgrade's target
        if "version" not in sets:
            return {}
        return self.observed_fields(doc["version"], _observations_of(doc))

    def add_missing_readiness(self):
        """Store the readiness of clusters written before it existed (run by
        `create-indexes`, so at each release), so that an index finds them
        by its status; how many."""
        done = 0
        for doc in self.collection.find({"readiness": {"$exists": False}},
                                        {"_id": 1, "version": 1}):
            done += self.collection.update_one(
                {"_id": doc["_id"], "readiness": {"$exists": False}},
                {"$set": self.observed_fields(doc["version"], {})}).modified_count
        return done

    def settle_in_turns(self):
        """Store the rollout standing of clusters written before it existed,
        or since by a process of the release before it (one still serving
        after the release step writes a scan's readiness and leaves the
        standing as it was); how many. Each is written only while what it is
        made of is as it was read: one changed meanwhile has it from that
        change, or from the next pass. A count meanwhile counts those with
        none by the fields it is made of (rollouts' store). A pass with
        nothing to write reads 100,000 clusters in 1.4 s; one that writes
        them all takes 34 s."""
        projection = dict.fromkeys(("version", "observed", "readiness",
                                    ROLLOUT_STANDING_FIELD), 1)
        done = 0
        for doc in self._each_in_slices({"readiness": {"$exists": True}}, projection):
            found = _standing_of(doc["version"], doc.get("observed"),
                                 doc["readiness"].get("status"))
            if doc.get(ROLLOUT_STANDING_FIELD) != found:
                observed = doc.get("observed")
                done += self.collection.update_one(
                    {"_id": doc["_id"], "version": doc["version"],
                     "readiness.status": doc["readiness"].get("status"),
                     **({"observed": None} if observed is None else
                        {"observed.version": observed.get("version")})},
                    {"$set": {ROLLOUT_STANDING_FIELD: found}}).modified_count
        return done

    def update(self, key, changes, principal, scope=None, revisions=None):
        if "version" in changes:
            changes = {**changes, VERSION_KEY_FIELD: version_key(changes["version"])}
        if isinstance(changes.get("labels"), dict):  # merged key by key: each key's stored path
            changes = {**changes, "labels": stored_map(changes["labels"])}
        return super().update(key, changes, principal, scope, self.stored_revisions(revisions))

    def delete(self, key, force=False, scope=None, revisions=None):
        return super().delete(key, force, scope, self.stored_revisions(revisions))

    # -- summaries ------------------------------------------------------------
    def summary(self, tree, group_by, scope=None):
        """([(key, count)], total): the live clusters matching the parsed
        filter `tree` in the caller's scope, counted by the `group_by`
        fields (inventory.core.grouping), in descending count, then key order;
        the MAX_GROUPS largest groups (`total` counts every match, so the
        groups add up to less than it when some were left out).

        One aggregation: a `$match` (which an index serves as far as the
        scope and filter allow) and a `$group` by the stored fields the
        groups are made of. A version is grouped by its version key and a
        support status by distribution and version key; both become their
        minor version and today's status here, and the rows that then share
        a key are added up."""
        stored = {}  # stored path -> its name in the aggregation's group key
        for field in group_by:
            for path in _group_paths(field):
                stored.setdefault(path, f"g{len(stored)}")
        rows = self._counted(tree, scope, stored)
        values_of = [self._group_values(field, stored, today()) for field in group_by]
        counts = {}
        for row in rows:
            key = tuple([value_of(row["_id"]) for value_of in values_of])
            counts[key] = counts.get(key, 0) + row["count"]
        orders = [_GROUP_ORDERS.get(field, _text_order) for field in group_by]

        def order(item):
            return -item[1], [order(value) for order, value in zip(orders, item[0])]
        groups = _largest(counts, order)
        return ([(dict(zip(group_by, key)), count) for key, count in groups],
                sum(counts.values()))

    def _counted(self, tree, scope, stored):
        """The rows (`{"_id": {name: value}, "count"}`) of one aggregation
        counting the live clusters matching `tree` in `scope` by the stored
        paths in `stored` (path -> its name in the row's key)."""
        query = all_of(self.scope_filter(scope), self.compile_filter(tree), LIVE)
        return self.collection.aggregate([
            {"$match": query},
            {"$group": {"_id": {name: f"${path}" for path, name in stored.items()},
                        "count": {"$sum": 1}}}])

    def blockers(self, tree, scope=None):
        """([((check, status, key), clusters)], total): what stands between
        the live clusters matching `tree` in `scope` and their next minor,
        one entry per failing check and key with how many clusters it
        blocks, most clusters first, then errors before warnings, then the
        checks' order and the key's; the MAX_GROUPS largest. `total` counts
        the clusters matched.

        The summary's one aggregation, grouped by the list of failing keys
        each cluster keeps (BLOCKERS_FIELD, as JSON): clusters with the same
        blockers are one row, and each row's count is added to each of its
        keys here."""
        counts, total = {}, 0
        for row in self._counted(tree, scope, {BLOCKERS_FIELD: "b"}):
            total += row["count"]
            keys = row["_id"].get("b") or ()
            for key in orjson.loads(keys) if keys.__class__ is str else keys:
                counts[key] = counts.get(key, 0) + row["count"]
        parsed = {key: readiness.blocker_of(key) for key in counts}

        def order(item):
            check, status, key = parsed[item[0]]
            return (-item[1], readiness.STATUSES.index(status), readiness.CHECKS.index(check),
                    _key_order(key))
        return [(parsed[key], count) for key, count in _largest(counts, order)], total

    @staticmethod
    def _group_values(field, stored, day):
        """A function giving `field`'s value from an aggregation row's key."""
        if field not in ("version", "support.status"):
            name = stored[_group_paths(field)[0]]
            return lambda ids: ids.get(name)
        key_name, distribution_name = stored[VERSION_KEY_FIELD], stored.get(DISTRIBUTION_FIELD)
        known = {}  # a few hundred versions at most: each worked out once

        def value_of(ids):
            version_key, distribution = ids.get(key_name), ids.get(distribution_name)
            try:
                return known[version_key, distribution]
            except KeyError:
                minor = None if version_key is None else minor_of(version_key)
                known[version_key, distribution] = value = minor if field == "version" else \
                    LIFECYCLES.status_of_minor(distribution or "upstream", minor, day)
                return value
        return value_of

    def record_scan(self, cluster, scan):
        """Record the stored scan `scan` on its cluster (`cluster`, its
        document as read): its `last_scanned_on` rises to the scan's, and
        each part the scan observed replaces the cluster's when the scan is
        the newer (readiness.merged), and with it `observed` and
        `readiness`. A scan that changes what was observed (`observed`'s
        version) or `readiness.status` is the cluster's `kubecluster.updated`
        event (those changes: _watched). False if the cluster is gone or
        being deleted; else Recorded, which says whether the scan was late
        (it observed nothing newer than the cluster held) and which older
        scans no longer keep their observations (OBSERVED_SCANS_FIELD: the
        scans' store unsets them)."""
        if not any(part in scan for part in ("server", "nodes", "deprecated_api_requests",
                                             "findings")):
            return self.record_scan_time(cluster, scan["scanned_on"]) and \
                Recorded(late=False, let_go=[])
        current = cluster
        for _ in range(UPDATE_ATTEMPTS):
            sets = {}
            if (current.get("last_scanned_on") or -1) < scan["scanned_on"]:
                sets["last_scanned_on"] = scan["scanned_on"]
                sets.update(self.order_fields({**current, **sets}, changed=("last_scanned_on",)))
            kept = _observations_of(current)
            observations = readiness.merged(kept, scan)
            if observations is not kept or "readiness" not in current:
                if CHECKS_FIELD in current and readiness.same_values(kept, observations):
                    # newer scans of the same: only which scan observed it
                    # moves, readiness is what it was (most of an agent's scans);
                    # a standing a process of the release before left behind
                    # is set right by the next of them
                    sets.update(self.observed_scans(observations))
                    standing_now = _standing_of(current["version"], sets["observed"],
                                                current["readiness"].get("status"))
                    if current.get(ROLLOUT_STANDING_FIELD) != standing_now:
                        sets[ROLLOUT_STANDING_FIELD] = standing_now
                else:
                    sets.update(self.observed_fields(current["version"], observations))
            late = observations is kept
            let_go = []
            if not late:  # it keeps what it observed: among the cluster's observed scans
                keys = sorted({*(current.get(OBSERVED_SCANS_FIELD) or ()), scan["_id"]})
                if len(keys) >= OBSERVED_SCANS_KEPT + OBSERVED_SCANS_SPARE:
                    keys, let_go = keys[-OBSERVED_SCANS_KEPT:], keys[:-OBSERVED_SCANS_KEPT]
                sets[OBSERVED_SCANS_FIELD] = keys
            if not sets:  # an older scan that changed nothing
                return self.still_live(current) and Recorded(late, let_go=[])
            sets[REVISION] = new_revision()
            after = {**current, **sets}
            changes = changes_between(_watched(current), _watched(after))
            if changes is not None and self.events is not None:
                outboxed = self.with_event(after, "updated", f"{self.event_kind}:"
                                           f"{current['_id']}:{sets[REVISION]}", changes)
                sets.update({OUTBOX: outboxed[OUTBOX], OUTBOX_SINCE: outboxed[OUTBOX_SINCE]})
            result = self.collection.update_one(
                all_of(self.identity(current), LIVE, {REVISION: current.get(REVISION)}),
                {"$set": sets})
            if result.matched_count == 1:
                if OUTBOX in sets:
                    self.publish(current["_id"], sets[OUTBOX])
                return Recorded(late, let_go)
            current = self.collection.find_one(all_of(self.identity(cluster), LIVE))
            if current is None:
                return False
        raise Contended("The cluster is being changed by others too often; retry the scan.")

    def record_scan_time(self, cluster, scanned_on):
        """Raise the `last_scanned_on` of this very cluster (by id, not by a
        name another cluster may have taken since) to `scanned_on`; False if
        it is gone or being deleted."""
        older = {"$or": [{"last_scanned_on": None}, {"last_scanned_on": {"$lt": scanned_on}}]}
        # order keys of `last_scanned_on` alone: made of it and the key only,
        # so right whatever else changed since `cluster` was read
        order_keys = self.order_fields({**cluster, "last_scanned_on": scanned_on},
                                       changed=("last_scanned_on",))
        result = self.collection.update_one(
            all_of(self.identity(cluster), LIVE, older),
            {"$set": {"last_scanned_on": scanned_on, **order_keys, REVISION: new_revision()}})
        return result.matched_count == 1 or self.still_live(cluster)


class Recorded(NamedTuple):
    """A scan recorded on its cluster (ClusterStore.record_scan); truthy."""

    late: bool  # it observed nothing newer than what the cluster held
    let_go: list  # keys of older scans whose observations are no longer kept


def _observations_of(doc):
    """What the cluster in `doc` keeps of its scans (readiness.py's form)."""
    kept = doc.get(OBSERVATIONS_FIELD)
    return orjson.loads(kept) if kept else {}


def _largest(counts, order):
    """The MAX_GROUPS first of `counts`' items in `order`."""
    return sorted(counts.items(), key=order) if len(counts) <= MAX_GROUPS else \
        heapq.nsmallest(MAX_GROUPS, counts.items(), key=order)


def _key_order(key):
    """A blocker's key in order: versions as versions, the rest as text."""
    return [(name, version_parts(value) or (), value) for name, value in key.items()]


def _watched(record):
    """What of a cluster (its document) a scan's event reports the changes of: what was
    observed (not which scan observed it: a newer scan of the same version
    moves `observed.scan` and `observed.scanned_on` silently, as it does
    `last_scanned_on`) and the readiness' status."""
    observed = record.get("observed")
    readiness = record.get("readiness") or {"status": "unknown"}  # stored before it: unknown
    return {"observed": observed and {"version": observed["version"],
                                      "minor": observed["minor"]},
            "readiness": {"status": readiness["status"]}}


def _group_paths(field):
    """The stored paths a `group_by` field's value is made of."""
    key = label_key(field)
    return (f"labels.{stored_key(key)}",) if key is not None else SPEC.group_fields[field]


# Where a group's value sorts among its field's: a missing value first,
# versions as versions, statuses in lifecycle order, text by code point.
def _text_order(value):
    return (0, "") if value is None else (1, value)


_GROUP_ORDERS = {
    "version": lambda value: (0,) if value is None else (1, *version_parts(value)),
    "support.status": STATUSES.index,
    "observed.minor": lambda value: (0,) if value is None else (1, *version_parts(value)),
    # worst first, as :blockers lists them
    "readiness.status": lambda value: (0, readiness.STATUSES.index(value)) if value in
    readiness.STATUSES else (1, _text_order(value)),
}


def _standing_of(version, observed, readiness_status):
    """ROLLOUT_STANDING_FIELD of a cluster at `version` that observed
    `observed` (its `observed` object, or None)."""
    return standing((observed or {}).get("minor") or minor_of(version), readiness_status)
