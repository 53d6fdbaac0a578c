"""Rollouts: a rollout's stages, its clusters counted by stage and state in
one aggregation, and its progress moved forward only by a compare-and-swap
on the rollout's document (any number of processes may look at once; one
write wins, and the others read again). The rules are
inventory/core/rollouts.py; the design, docs/rollouts.md."""
import hashlib
from datetime import datetime, timedelta, timezone

import orjson
from pymongo import ReturnDocument
from pymongo.errors import OperationFailure

from inventory.core import filtering
from inventory.core import rollouts as rules
from inventory.core.errors import Contended, InvalidField, NotFound, NotNow
from inventory.core.ids import rfc3339
from inventory.core.lifecycle import DISTRIBUTION_FIELD, VERSION_KEY_FIELD, minor_of
from inventory.core.turns import Turns
from inventory.resources.clusters.spec import OBSERVED_VERSION_KEY_FIELD, ROLLOUT_STANDING_FIELD
from inventory.resources.clusters.store import CHECKS_FIELD
from inventory.resources.rollouts.spec import SPEC
from inventory.store.base import ResourceStore
from inventory.store.event_documents import acting
from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.pages import MAX_EXAMINED, Page, all_of
from inventory.store.query import row_test
from inventory.store.records import LIVE, REVISION, Record, new_revision
from inventory.store.updates import UPDATE_ATTEMPTS

# The rollout's stored progress ({stage name: its progress}), the counts
# last worked out (shown by lists; a read of one rollout shows them when
# nothing changed since, else counts anew), when any process should look at
# it next for a reason no change says (a soak's end), and, while it is not
# complete, the change feed's position its counts were made at (a look is
# due as soon as the feed moves past it)
PROGRESS, COUNTS, DUE, SEEN = "_progress", "_counts", "_due", "_seen"
# When a look last claimed it: a change is looked at LOOK_SECONDS after
# the last look at the soonest (a fleet whose clusters change every second
# has each rollout counted every LOOK_SECONDS, no more)
LOOKED = "_looked"
# A claimed look, or a rollout whose stages read what changes with no event
# (below), is looked at again within this: a stage's turn comes within 5 s
# of what brings it (a cluster becoming done, a soak ending)
LOOK_SECONDS = 2
# With nothing changed, a rollout is still looked at this often: what a
# filter compiles to moves with the day (support.status), and a writer that
# died between its write and its event publishes it only when swept
QUIET_SECONDS = 300
# Stored paths written with no event (ClusterStore.record_scan_time): a
# stage whose filter reads one is counted at every look
_SILENT_PATHS = ("last_scanned_on",)
# Stored paths that a few values are shared by many clusters: a count
# groups the clusters by them and checks each group against the stages'
# filters once (a filter on a name or a time is checked cluster by cluster)
_FEW_VALUED = ("environment", "labels.", VERSION_KEY_FIELD, DISTRIBUTION_FIELD,
               OBSERVED_VERSION_KEY_FIELD, "observed.minor", "readiness.status",
               "readiness.target")
# What a count groups the clusters by for their state: their stored
# standing, one field (a count of five stages reads three fields, as a
# summary of three does: bench/rollouts.txt); or, where clusters written
# before it existed have none (until ClusterStore.settle_in_turns stores
# theirs), the three it is made of: the version key, the observed version's key
# (top-level: read at half the cost of `observed.minor`), the readiness' status
_STANDING = {"s": f"${ROLLOUT_STANDING_FIELD}"}
_PARTS = {"v": f"${VERSION_KEY_FIELD}", "o": f"${OBSERVED_VERSION_KEY_FIELD}",
          "r": "$readiness.status"}
_READ_SLICE = 200  # clusters read at once by a list of a rollout's clusters
_NOT_IMPLEMENTED = 238  # the server's code for a stage it lacks
_ZERO = {"clusters": 0, **dict.fromkeys(rules.CLUSTER_STATES, 0)}


def _now():
    now = datetime.now(timezone.utc)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)  # BSON's precision


def _naive(moment):
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


class RolloutStore(ResourceStore):
    spec = SPEC
    key_field = "name"
    scope_field = "organization"
    immutable_fields = ("name", "organization", "target")
    computed_fields = ("status",)  # worked out from the stages and the clusters
    clusters = None  # the clusters' store (spec.reads), set by Store

    def __init__(self, db):
        super().__init__(db)
        self.clock = _now  # what "now" is (tests hand their own)
        self._facets = True  # whether the server answers `$facet` (as far as known)
        self.counts_made = 0  # how many times this store counted a rollout's clusters

    # -- what a rollout's stages hold -----------------------------------------

    def stage_queries(self, stages, now=None):
        """The clusters' query of each stage's filter, as written (a filter
        parsed and compiled as `GET /kubeclusters` does: BadFilter if not one)."""
        return [self.clusters.compile_filter(filtering.parse(stage["filter"]), now)
                if stage["filter"] else {} for stage in stages]

    @staticmethod
    def _members_query(queries, index):
        """The clusters of stage `index`: its filter's, and none of an earlier stage's."""
        earlier = queries[:index]
        return all_of(queries[index], {"$nor": earlier}) if earlier else queries[index]

    def _scope_of(self, doc):
        """The clusters the rollout may see: its organization's, or every one."""
        return all_of({"organization": doc["organization"]} if doc["organization"] else None,
                      LIVE)

    def count(self, doc, queries=None):
        """({stage name: {"clusters", "done", "ready", "blocked", "behind"}},
        unstaged): the clusters of each stage (the first whose filter
        matches them) by state, and those no stage matches. `queries`: the
        stages' (stage_queries), if the caller compiled them.

        One aggregation, a summary's where the filters read only fields
        that few values are shared by (environment, labels, versions,
        readiness: _grouped_count); else each stage a facet of one pass.
        Both count by the clusters' standing; where some have none stored
        yet, they count again by the fields it is made of."""
        self.counts_made += 1
        queries = self.stage_queries(doc["stages"]) if queries is None else queries
        try:
            return self._count_by(doc, queries, _STANDING)
        except _NoStanding:
            return self._count_by(doc, queries, _PARTS)

    def _count_by(self, doc, queries, row):
        grouped = self._grouped_count(doc, queries, row)
        if grouped is not None:
            return grouped
        return self._faceted_count(doc, queries, row)

    def _grouped_count(self, doc, queries, row):
        """count's answer from one aggregation as a summary's: the
        rollout's clusters grouped by the paths the stages' filters read
        and those of `row`, a state's (a few hundred rows at most where
        those are few-valued), each row then given to the first stage whose
        filter it matches (RowTest: as MongoDB matches the clusters it
        stands for). None where a filter reads another path or compares
        otherwise, or a row holds a value that is not a string or null."""
        tests = [row_test(query) if query else None for query in queries]
        if any(test is None and query for test, query in zip(tests, queries)):
            return None
        read = sorted({path for test in tests if test is not None for path in test.paths})
        if not all(path.startswith(_FEW_VALUED) for path in read):
            return None
        names = {path: f"f{index}" for index, path in enumerate(read)}
        for name, path in row.items():
            names.setdefault(path[1:], name)
        rows = self.clusters.collection.aggregate([
            {"$match": self._scope_of(doc)},
            {"$group": {"_id": {name: f"${path}" for path, name in names.items()},
                        "n": {"$sum": 1}}}])
        target = rules.parse_target(doc["target"])
        counted = {stage["name"]: dict(_ZERO) for stage in doc["stages"]}
        unstaged = 0
        for found in rows:
            key = found["_id"]
            values = {path: key[name] for path, name in names.items() if name in key}
            if any(value is not None and value.__class__ is not str
                   for value in values.values()):
                return None
            for stage, test in zip(doc["stages"], tests):
                if test is None or test(values):
                    counts = counted[stage["name"]]
                    state = _state_of({name: values.get(path[1:]) for name, path in row.items()},
                                      row, target)
                    counts[state] += found["n"]
                    counts["clusters"] += found["n"]
                    break
            else:
                unstaged += found["n"]
        return counted, unstaged

    def _faceted_count(self, doc, queries, row):
        """count's answer from one aggregation of one pass: each stage's
        clusters a facet counted by the stored fields of `row`, a state's.
        A stage's facet checks its own filter first, and the earlier
        stages' only for the clusters that match it."""
        group = {"$group": {"_id": row, "n": {"$sum": 1}}}
        facets = {f"s{index}": [{"$match": self._members_query(queries, index)}, group]
                  for index in range(len(queries))}
        # every cluster it may see, counted with no filter to check: the
        # unstaged ones are those no stage counted (a facet of `$nor` of
        # every stage's filter would check them all again for each cluster)
        facets["all"] = [{"$match": {}}, group]
        rows = self._faceted(self._scope_of(doc), facets)
        target = rules.parse_target(doc["target"])
        counted = {}
        for index, stage in enumerate(doc["stages"]):
            counts = dict(_ZERO)
            for found in rows[f"s{index}"]:
                counts[_state_of(found["_id"], row, target)] += found["n"]
                counts["clusters"] += found["n"]
            counted[stage["name"]] = counts
        staged = sum(counts["clusters"] for counts in counted.values())
        return counted, sum(found["n"] for found in rows["all"]) - staged

    def _faceted(self, query, facets):
        """{facet: its rows} of the clusters matching `query`: one `$facet`
        aggregation (one pass), or, on a server without `$facet` (FerretDB:
        NotImplemented), one aggregation per facet, from then on."""
        collection = self.clusters.collection
        if self._facets:
            try:
                (rows,) = collection.aggregate([{"$match": query}, {"$facet": facets}])
                return rows
            except OperationFailure as error:
                if error.code != _NOT_IMPLEMENTED:
                    raise
                self._facets = False
        return {name: list(collection.aggregate([
                    {"$match": all_of(query, stages[0]["$match"])}, *stages[1:]]))
                for name, stages in facets.items()}

    # -- progress -----------------------------------------------------------

    def _counts_now(self, doc, now):
        """(counted, unstaged, snapshot, volatile): the rollout's counts as
        of now, and what its document keeps of them (COUNTS). The counts
        kept are reused, with no count, while they still hold: made at the
        change feed's present position (no change with an event written
        since: a cluster's, a scan's) from the same queries (its stages'
        filters compiled now). `volatile`: its queries move with the clock,
        or read what changes with no event, or there is no feed: the kept
        counts never hold, and it is looked at within LOOK_SECONDS."""
        # read before the clusters are: a change its count may miss moves it after
        position = None if self.events is None else self.events.position()
        queries = self.stage_queries(doc["stages"])
        basis = hashlib.blake2b(orjson.dumps(queries), digest_size=8).hexdigest()
        volatile = position is None or _reads_silent_paths(queries) \
            or queries != self.stage_queries(doc["stages"], _ANOTHER_MOMENT)
        kept = doc.get(COUNTS) or {}
        if not volatile and kept.get("position") == position and kept.get("basis") == basis:
            counted = {stage["name"]: {field: stage.get(field, 0) for field in _ZERO}
                       for stage in kept["stages"]}
            return counted, kept["unstaged"], kept, volatile
        counted, unstaged = self.count(doc, queries)
        snapshot = {"stages": [{"name": stage["name"], **counted[stage["name"]]}
                               for stage in doc["stages"]],
                    "unstaged": unstaged, "computed_on": rfc3339(now),
                    "position": position, "basis": basis}
        return counted, unstaged, snapshot, volatile

    @staticmethod
    def _due(doc, progress, now, volatile, planned=None):
        """When to look again for a reason no change says: never once
        complete; within LOOK_SECONDS if `volatile`; else when its next soak
        ends, at most QUIET_SECONDS from now. `planned`: a look already
        planned, kept if it comes no later and is still to come."""
        if rules.rollout_state(progress, doc["paused"]) == "complete":
            return None
        if volatile:
            return _naive(now) + timedelta(seconds=LOOK_SECONDS)
        due = _naive(now) + timedelta(seconds=QUIET_SECONDS)
        soak_ends = rules.next_due(doc["stages"], progress)
        if soak_ends is not None:
            due = min(due, _naive(soak_ends))
        if planned is not None and _naive(now) < planned <= due:
            return planned
        return due

    def progressed(self, doc, now=None, approve=None, principal=None, replan=False):
        """The rollout `doc` (its stored document) counted (its counts kept
        while they hold: _counts_now) and moved forward as far as its
        clusters and `now` allow, written in one compare-and-swap on its
        revision (read again and redone if another write came first): its
        stages' changes of state are its `rollout.updated` event
        (`status.stages.<stage>.state`). With `approve`, a held stage's
        name: approved by `principal` in the same write (InvalidField for no
        such stage, NotNow if it is not held). `replan`: its next look is
        planned anew (a look claimed it). The document as written (as read
        when nothing changed: no write); NotFound if the rollout went away."""
        now = now or self.clock()
        stamp = rfc3339(now)
        counted, unstaged, snapshot, volatile = self._counts_now(doc, now)
        for _ in range(UPDATE_ATTEMPTS):
            progress = doc.get(PROGRESS) or {}
            if approve is not None:
                progress = self._approved(doc, progress, approve, principal, stamp)
            moved = rules.advanced(doc["stages"], progress, counted, doc["paused"], now)
            sets = {COUNTS: snapshot,
                    DUE: self._due(doc, moved, now, volatile,
                                   None if replan else doc.get(DUE))}
            complete = rules.rollout_state(moved, doc["paused"]) == "complete"
            unsets = {SEEN: ""} if complete or snapshot["position"] is None else {}
            if not unsets:
                sets[SEEN] = snapshot["position"]
            stored = doc.get(PROGRESS) or {}
            if snapshot is doc.get(COUNTS) and moved == stored and sets[DUE] == doc.get(DUE) \
                    and doc.get(SEEN) == sets.get(SEEN) and (SEEN in doc) != bool(unsets):
                return doc  # nothing to write: the counts held, nothing moved
            if moved != stored:
                sets.update({PROGRESS: moved, REVISION: new_revision()})
                if approve is not None:
                    sets.update({"last_modified_by": principal, "last_modified_on": stamp})
                changes = _state_changes(doc, stored, moved)
                if changes and self.events is not None:
                    # the approver's change, or the service's own (whoever read it)
                    with acting(principal if approve is not None else "system"):
                        outboxed = self.with_event({**doc, **sets}, "updated",
                                                   f"{self.event_kind}:{doc['_id']}:"
                                                   f"{sets[REVISION]}", changes)
                    sets.update({OUTBOX: outboxed[OUTBOX], OUTBOX_SINCE: outboxed[OUTBOX_SINCE]})
            written = self.collection.find_one_and_update(
                all_of(self.identity(doc), LIVE, {REVISION: doc.get(REVISION)}),
                {"$set": sets, **({"$unset": unsets} if unsets else {})},
                return_document=ReturnDocument.AFTER)
            if written is not None:
                if OUTBOX in sets:
                    self.publish(written["_id"], sets[OUTBOX])
                return written
            key = doc["_id"]
            doc = self.collection.find_one(all_of(self.identity(doc), LIVE))
            if doc is None:
                raise NotFound(f"No {self.kind} {key!r}.")
        raise Contended(f"The {self.kind} is being changed by others too often; retry.")

    @staticmethod
    def _approved(doc, progress, name, principal, stamp):
        names = [stage["name"] for stage in doc["stages"]]
        if name not in names:
            raise InvalidField("stage", f"The rollout has no stage {name!r} (its stages: "
                               f"{', '.join(names)}).", name)
        state = progress.get(name) or rules.new_progress()
        if state["state"] != "held":
            raise NotNow(f"Stage {name!r} is {state['state']}, not held: only a held stage "
                         "(its turn come, waiting for an approval) is approved.")
        return {**progress, name: {**state, "approved_by": principal, "approved_on": stamp}}

    def approve(self, key, stage, principal, scope=None):
        """Approve the held stage `stage` of the rollout at `key`: it opens
        (unless the rollout is paused: then when it is resumed)."""
        return self.to_api(self.progressed(self.get_doc(key, scope), approve=stage,
                                           principal=principal))

    def look_due(self, now=None):
        """Look at every live rollout whose next look is due (its planned
        look's time came, or a change was written since its counts: the
        change feed moved past them), claiming each look first (a write on
        `_due` and `_seen` as read: of processes that look at once, one
        claims it); how many this process looked at. With nothing changed
        and no look planned, two reads by key and by index, no count."""
        now = now or self.clock()
        position = None if self.events is None else self.events.position()
        due_now = {DUE: {"$lte": _naive(now)}}
        stale = {SEEN: {"$lt": position}, LOOKED: {"$not": {
            "$gt": _naive(now) - timedelta(seconds=LOOK_SECONDS)}}}
        looked = 0
        for due in list(self.collection.find(
                {**LIVE, "$or": [due_now, stale]} if position is not None
                else {**LIVE, **due_now}, {"_id": 1, DUE: 1, SEEN: 1, LOOKED: 1})):
            claimed = self.collection.find_one_and_update(
                {"_id": due["_id"], DUE: due.get(DUE), SEEN: due.get(SEEN),
                 LOOKED: due.get(LOOKED), **LIVE},
                {"$set": {DUE: _naive(now) + timedelta(seconds=LOOK_SECONDS), LOOKED: _naive(now),
                          **({SEEN: position} if position is not None else {})}},
                return_document=ReturnDocument.AFTER)
            if claimed is not None:
                try:
                    self.progressed(claimed, now, replan=True)
                except NotFound:  # deleted meanwhile
                    continue
                looked += 1
        return looked

    def others_settled(self):
        """The clusters' standings were set right with no event (their
        store's settle_in_turns): every rollout's kept counts are counted
        again at its next read, and those not complete are looked at now."""
        self.collection.update_many(LIVE, {"$unset": {f"{COUNTS}.position": ""}})
        self.collection.update_many({**LIVE, DUE: {"$ne": None}},
                                    {"$set": {DUE: _naive(self.clock())}})

    # -- records ------------------------------------------------------------

    def create(self, body, principal, scope=None):
        org = self.organization_of_new(body.get("organization"), scope)
        doc = {"_id": body["name"], "title": body["title"],
               "description": body.get("description", ""), "organization": org,
               "target": body["target"], "paused": body.get("paused", False),
               "stages": body["stages"], **self.audit_new(principal)}
        now = self.clock()
        counted, unstaged, doc[COUNTS], volatile = self._counts_now(doc, now)
        # the first stage's turn comes at creation: the record as made shows it
        doc[PROGRESS] = rules.advanced(doc["stages"], {}, counted, doc["paused"], now)
        doc[DUE] = self._due(doc, doc[PROGRESS], now, volatile)
        if doc[COUNTS]["position"] is not None \
                and rules.rollout_state(doc[PROGRESS], doc["paused"]) != "complete":
            doc[SEEN] = doc[COUNTS]["position"]
        self.insert_in_organization(doc, org)
        return self.to_api(doc)

    def get(self, key, scope=None):
        """The rollout, counted now (and moved forward if its turn came)."""
        return self.to_api(self.progressed(self.get_doc(key, scope)))

    def update(self, key, changes, principal, scope=None, revisions=None):
        record = super().update(key, changes, principal, scope,
                                None if revisions is None else _stored_revisions(revisions))
        if {"stages", "paused"} & changes.keys():  # a turn may come at once
            return self.get(key, scope)
        return record

    def delete(self, key, force=False, scope=None, revisions=None):
        return super().delete(key, force, scope,
                              None if revisions is None else _stored_revisions(revisions))

    def to_api(self, doc):
        record = super().to_api(doc)
        progress, counts = doc.get(PROGRESS) or {}, doc.get(COUNTS) or {}
        counted = {stage["name"]: stage for stage in counts.get("stages") or ()}
        stages = []
        for stage in doc["stages"]:
            state = progress.get(stage["name"]) or rules.new_progress()
            count = counted.get(stage["name"]) or _ZERO
            stages.append({"name": stage["name"], "state": state["state"],
                           **{field: count.get(field, 0) for field in _ZERO},
                           **{field: state[field] for field in (
                               "opened_on", "soak_ends_on", "completed_on", "approved_by",
                               "approved_on")}})
        record["status"] = {"state": rules.rollout_state(progress, doc["paused"]),
                            "stages": stages, "unstaged": counts.get("unstaged", 0),
                            "computed_on": counts.get("computed_on")}
        # the answer changes with the clusters' counts as well as with
        # writes: so does its ETag (If-Match compares the stored part)
        digest = hashlib.blake2b(orjson.dumps([counts.get("stages"), counts.get("unstaged")]),
                                 digest_size=6).hexdigest()
        record.revision = f"{record.revision}-{digest}"
        return record

    # -- the rollout's clusters ---------------------------------------------

    def ready_clusters(self, doc, tree, turns, most):
        """[(stage name, cluster record, as an answer embeds it)] of the clusters that may upgrade
        now: those of the rollout's open stages that are `ready` (and match
        the parsed clusters' filter `tree`, if any), in name order; None
        when more than `most` are. `turns`: checked between slices."""
        progress, target = doc.get(PROGRESS) or {}, rules.parse_target(doc["target"])
        queries = self.stage_queries(doc["stages"])
        extra = self.clusters.compile_filter(tree) if tree is not None else None
        found = []
        for index, stage in enumerate(doc["stages"]):
            if (progress.get(stage["name"]) or {}).get("state") != "open":
                continue
            after = None
            while True:
                docs = list(self.clusters.shown.find(all_of(
                    self._scope_of(doc), self._members_query(queries, index), extra,
                    # what `ready` asks of readiness, narrowed by its index
                    {"readiness.status": {"$in": sorted(rules.GOES)}},
                    None if after is None else {"_id": {"$gt": after}}),
                    sort=[("_id", 1)], limit=_READ_SLICE))
                for cluster in docs:
                    minor = _minor_of((cluster.get("observed") or {}).get("minor"),
                                      cluster.get(VERSION_KEY_FIELD))
                    if rules.cluster_state(minor, cluster["readiness"]["status"],
                                           target) == "ready":
                        found.append((stage["name"], self.clusters.to_answer(cluster)))
                    turns.check()  # a slice's records shaped are tens of ms: look each time
                if len(found) > most:
                    return None
                if len(docs) < _READ_SLICE:
                    break
                after = docs[-1]["_id"]
        return sorted(found, key=lambda pair: pair[1]["name"])

    def members_page(self, doc, request, keep):
        """A page of the rollout's clusters (`{"cluster", "stage", "state",
        "minor", "readiness"}`) in stage order, then name, those for which
        `keep(row)` holds, from `request.after` (`<stage index>/<name>`)
        on: at most `request.limit`, reading at most MAX_EXAMINED clusters
        (the page may come back short; the token goes on after the last read)."""
        queries = self.stage_queries(doc["stages"], request.now)
        target = rules.parse_target(doc["target"])
        index, name = (0, None) if request.after is None else _bound(request.after)
        rows, examined, turns = [], 0, Turns()
        while index < len(queries):
            stage = doc["stages"][index]["name"]
            # read to be shown (uncopied on the embedded store), no more than the page needs
            wanted = min(_READ_SLICE, request.limit - len(rows) + 1)
            docs = list(self.clusters.shown.find(
                all_of(self._scope_of(doc), self._members_query(queries, index),
                       None if name is None else {"_id": {"$gt": name}}),
                sort=[("_id", 1)], limit=wanted))
            for cluster in docs:
                examined += 1
                row = _member(cluster, stage, target)
                if keep(row):
                    rows.append(row)
                if len(rows) == request.limit or examined >= MAX_EXAMINED:
                    return Page(rows, f"{index:02d}/{cluster['_id']}")
                turns.check()
            if len(docs) == wanted:
                name = docs[-1]["_id"]
                continue
            index, name = index + 1, None
        return Page(rows, None)


# A moment a filter is compiled at too: a query that differs from the one
# compiled now moves with the clock ("-PT1H")
_ANOTHER_MOMENT = "2000-01-01T00:00:00.000Z"


def _reads_silent_paths(queries):
    """Whether any of `queries` reads a path written with no event."""
    def paths(query):
        for key, condition in query.items():
            if key in ("$and", "$or", "$nor"):
                for part in condition:
                    yield from paths(part)
            elif not key.startswith("$"):
                yield key
    return any(path.startswith(_SILENT_PATHS) for query in queries for path in paths(query))


def _bound(after):
    index, _, name = after.partition("/")
    return int(index), name


def _member(cluster, stage, target):
    """One row of a rollout's clusters list."""
    minor = (cluster.get("observed") or {}).get("minor") or minor_of(cluster["version"])
    readiness = cluster.get("readiness") or {"status": "unknown", "target": None}
    checks = orjson.loads(cluster[CHECKS_FIELD]) if cluster.get(CHECKS_FIELD) else []
    return Record({"cluster": cluster["_id"], "stage": stage,
                   "state": rules.cluster_state(rules.minor_key(minor),
                                                readiness.get("status"), target),
                   "minor": minor,
                   "readiness": {"status": readiness.get("status", "unknown"),
                                 "target": readiness.get("target"),
                                 # what stands in the way: the checks that are not passing
                                 "checks": [{"id": check["id"], "status": check["status"],
                                             "summary": check["summary"]}
                                            for check in checks
                                            if check["status"] != "passing"]}})


class _NoStanding(Exception):
    """Clusters written before their standing was stored were counted."""


def _state_of(key, row, target):
    """The state of the clusters of a counted row: `key` holds the row's
    values by the names of `row` (_STANDING or _PARTS; a missing value is
    null)."""
    if row is _STANDING:
        text = key.get("s")
        if text.__class__ is not str:  # none stored (or not one the store writes)
            raise _NoStanding
        return rules.standing_state(text, target)
    return rules.cluster_state(_minor_of(key.get("o"), key.get("v")), key.get("r"), target)


def _minor_of(observed, version_key):
    """(major, minor) of a cluster: the observed one (`observed`: its minor
    or its version's key), else its recorded version's."""
    if observed:
        return rules.minor_key(minor_of(observed))
    return None if version_key is None else rules.minor_key(minor_of(version_key))


def _state_changes(doc, before, after):
    """The event's changes: each stage's state that moved, and the rollout's."""
    changes = {}
    for stage in doc["stages"]:
        old = (before.get(stage["name"]) or rules.new_progress())["state"]
        new = after[stage["name"]]["state"]
        if old != new:
            changes[f"status.stages.{stage['name']}.state"] = {"from": old, "to": new}
    old, new = rules.rollout_state(before, doc["paused"]), rules.rollout_state(after,
                                                                                doc["paused"])
    if old != new:
        changes["status.state"] = {"from": old, "to": new}
    return changes


def _stored_revisions(revisions):
    """The stored revisions of ETags (`<revision>-<counts' digest>`)."""
    return [(tag or "").split("-", 1)[0] for tag in revisions]
