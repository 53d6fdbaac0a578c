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
from inventory.core.lifecycle import VERSION_KEY_FIELD, minor_of
from inventory.core.turns import Turns
from inventory.resources.clusters.store import CHECKS_FIELD
from inventory.resources.rollouts.spec import SPEC
from inventory.store.base import ResourceStore
from inventory.store.event_documents import acting
from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.pages import MAX_EXAMINED, Page, all_of
from inventory.store.records import LIVE, REVISION, Record, new_revision
from inventory.store.updates import UPDATE_ATTEMPTS

# The rollout's stored progress ({stage name: its progress}), the counts
# last worked out (shown by lists; a read of one rollout counts anew), and
# when any process should look at it next (None: complete, never)
PROGRESS, COUNTS, DUE = "_progress", "_counts", "_due"
# An active rollout is looked at (counted, moved forward) at least this
# often by whichever process claims the look: a stage's turn comes within
# 5 s of what brings it (a cluster becoming done, a soak ending)
LOOK_SECONDS = 2
_ROW = {"v": f"${VERSION_KEY_FIELD}", "o": "$observed.minor", "r": "$readiness.status"}
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

    def count(self, doc):
        """({stage name: {"clusters", "done", "ready", "blocked", "behind"}},
        unstaged): the clusters of each stage (the first whose filter
        matches them) by state, and those no stage matches.

        One aggregation: the rollout's clusters, each stage's a facet
        counted by the three stored fields a state is made of (the version
        key, the observed minor, the readiness' status): a few dozen rows
        at most, whatever the number of clusters. A stage's facet checks
        its own filter first, and the earlier stages' only for the clusters
        that match it."""
        queries = self.stage_queries(doc["stages"])
        group = {"$group": {"_id": _ROW, "n": {"$sum": 1}}}
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
            for row in rows[f"s{index}"]:
                key = row["_id"]
                state = rules.cluster_state(_minor_of(key.get("o"), key.get("v")),
                                            key.get("r"), target)
                counts[state] += row["n"]
                counts["clusters"] += row["n"]
            counted[stage["name"]] = counts
        staged = sum(counts["clusters"] for counts in counted.values())
        return counted, sum(row["n"] for row in rows["all"]) - staged

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

    def _snapshot(self, doc, counted, unstaged, now):
        return {"stages": [{"name": stage["name"], **counted[stage["name"]]}
                           for stage in doc["stages"]],
                "unstaged": unstaged, "computed_on": rfc3339(now)}

    @staticmethod
    def _due(progress, paused, now):
        """When to look again: never once complete, else within LOOK_SECONDS."""
        if rules.rollout_state(progress, paused) == "complete":
            return None
        return _naive(now) + timedelta(seconds=LOOK_SECONDS)

    def progressed(self, doc, now=None, approve=None, principal=None):
        """The rollout `doc` (its stored document) counted and moved forward
        as far as its clusters and `now` allow, written in one
        compare-and-swap on its revision (read again and redone if another
        write came first): its stages' changes of state are its
        `rollout.updated` event (`status.stages.<stage>.state`). With
        `approve`, a held stage's name: approved by `principal` in the same
        write (InvalidField for no such stage, NotNow if it is not held).
        The document as written; NotFound if the rollout went away."""
        now = now or self.clock()
        stamp = rfc3339(now)
        counted, unstaged = self.count(doc)
        for _ in range(UPDATE_ATTEMPTS):
            progress = doc.get(PROGRESS) or {}
            if approve is not None:
                progress = self._approved(doc, progress, approve, principal, stamp)
            moved = rules.advanced(doc["stages"], progress, counted, doc["paused"], now)
            sets = {COUNTS: self._snapshot(doc, counted, unstaged, now),
                    DUE: self._due(moved, doc["paused"], now)}
            stored = doc.get(PROGRESS) or {}
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
                {"$set": sets}, return_document=ReturnDocument.AFTER)
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
        """Look at every live rollout whose next look is due, claiming each
        look first (a write on `_due` as read: of processes that look at
        once, one claims it); how many this process looked at."""
        now = now or self.clock()
        looked = 0
        for due in list(self.collection.find({DUE: {"$lte": _naive(now)}, **LIVE},
                                             {"_id": 1, DUE: 1})):
            claimed = self.collection.find_one_and_update(
                {"_id": due["_id"], DUE: due[DUE], **LIVE},
                {"$set": {DUE: _naive(now) + timedelta(seconds=LOOK_SECONDS)}},
                return_document=ReturnDocument.AFTER)
            if claimed is not None:
                try:
                    self.progressed(claimed, now)
                except NotFound:  # deleted meanwhile
                    continue
                looked += 1
        return looked

    # -- records ------------------------------------------------------------

    def create(self, body, principal, scope=None):
        org = self.organization_of_new(body.get("organization"), scope)
        doc = {"_id": body["name"], "title": body["title"],
               "description": body.get("description", ""), "organization": org,
               "target": body["target"], "paused": body.get("paused", False),
               "stages": body["stages"], **self.audit_new(principal)}
        now = self.clock()
        counted, unstaged = self.count(doc)
        # the first stage's turn comes at creation: the record as made shows it
        doc[PROGRESS] = rules.advanced(doc["stages"], {}, counted, doc["paused"], now)
        doc[COUNTS] = self._snapshot(doc, counted, unstaged, now)
        doc[DUE] = self._due(doc[PROGRESS], doc["paused"], now)
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


def _minor_of(observed_minor, version_key):
    """(major, minor) of a cluster: the observed minor, else its recorded version's."""
    if observed_minor:
        return rules.minor_key(observed_minor)
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
