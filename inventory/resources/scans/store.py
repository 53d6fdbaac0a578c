"""Scans: keyed under their cluster, in `scanned_on` order; retention by age and count."""
import time
from datetime import datetime, timezone

import orjson

from inventory.core.errors import (
    NotFound,
)
from inventory.core.ids import new_id
from inventory.resources.scans.spec import KEPT_OBSERVATIONS, SPEC
from inventory.store import pages
from inventory.store.base import ResourceStore
from inventory.store.outbox import OUTBOX
from inventory.store.records import LIVE, REVISION, Record, copied

OBSERVED_FIELD = "_observed"  # what a scan observed but its agent (stored_observations)
AGENT_FIELD = "_agent"  # the agent that posted it (stored_observations)


class ScanStore(ResourceStore):
    """Scans, keyed `{cluster id}/{scanned_on, 12 digits}/{scan id}` so that a
    range on `_id` walks one cluster's scans in `scanned_on` order.

    Retention: a TTL index on `_recorded_at` (when the scan was recorded,
    not its `scanned_on`, so a backfilled old scan is kept like a new one)
    drops scans `retention_days` after they were recorded (MongoDB's monitor
    runs once a minute; the embedded store on access), and each new scan
    trims its cluster to
    its `retention_count` newest: one walk of its keys from the newest to
    the count's, then one range delete of what lies beyond."""

    TIME_FIELD = "_recorded_at"

    spec = SPEC
    removal_events = False  # scans go with their cluster, or by retention, silently
    key_field = "_key"  # scans are never addressed by key; to_api drops it
    address_field = "id"  # a path addresses a scan by its id, under its cluster
    clusters = None  # the parent collection, set by Store

    retention_days, retention_count = 365, 1000

    def configure(self, settings):
        self.retention_days, self.retention_count = settings["scan_retention"]
        self._since_trim = {}  # cluster id: scans recorded by this process since its trim

    def expiring(self):
        return ((self.TIME_FIELD, self.retention_days * 24 * 3600),)

    def order_field(self, ordering):
        return "_id"  # a cluster's keys are in `scanned_on` order already

    def list_under(self, cluster_id, request):
        """A page of the cluster's scans: a range of keys (their `scanned_on`
        order). The request's scope was applied when the cluster was found."""
        lower, upper = self.key_range(cluster_id)
        return pages.walk(self.shown, request, self.to_api,
                          query=self.compile_filter(request.tree, request.now), visible=LIVE,
                          lower=lower, upper=upper)

    def to_api(self, doc):
        record = Record(id=doc["id"], cluster=doc["cluster"], scanned_on=doc["scanned_on"],
                        agent=_agent_of(doc),
                        **dict.fromkeys(KEPT_OBSERVATIONS))
        if OBSERVED_FIELD in doc:
            record.update(orjson.loads(doc[OBSERVED_FIELD]))
        record.revision = doc.get(REVISION)
        return record

    @staticmethod
    def key_range(cluster_id):
        # "/" < "0" in ASCII: every key of this cluster lies strictly between
        return f"{cluster_id}/", f"{cluster_id}0"

    def get_under(self, cluster_id, scan_id):
        doc = self.collection.find_one({"id": scan_id, "cluster": cluster_id})
        if doc is None:
            raise NotFound(f"No scan {scan_id!r} of this cluster.")
        return self.to_api(doc)

    @staticmethod
    def key(cluster_id, scanned_on, scan_id):
        return f"{cluster_id}/{scanned_on:012d}/{scan_id}"

    def create(self, cluster_key, scanned_on=None, scope=None):
        """Record a scan of the cluster at `cluster_key` (name or id)."""
        return self.create_under(cluster_key, {"scanned_on": scanned_on}, None, scope)

    def create_under(self, cluster_key, body, principal, scope=None):
        """Record a scan (`body`: its `scanned_on`, or none for now, and what
        it observed) of the cluster at `cluster_key` (name or id), and on the
        cluster what it observed first (ClusterStore.record_scan). Scans keep
        no author."""
        scanned_on = body.get("scanned_on")
        cluster = self.clusters.get_doc(cluster_key, scope)
        scanned_on = int(time.time()) if scanned_on is None else scanned_on
        scan_id = new_id("k8scs")
        doc = {"_id": self.key(cluster["id"], scanned_on, scan_id), "id": scan_id,
               "cluster": cluster["id"], "scanned_on": scanned_on,
               **stored_observations(body),
               self.TIME_FIELD: datetime.now(timezone.utc).replace(tzinfo=None)}
        self.insert(doc, publish=False, parent=cluster)
        # The cluster's update doubles as the check that it still exists.
        observed = {name: body[name] for name in KEPT_OBSERVATIONS if body.get(name) is not None}
        recorded = self.clusters.record_scan(cluster, {**doc, **observed})
        if not recorded:
            self.collection.delete_one({"_id": doc["_id"]})
            raise NotFound(f"No cluster {cluster_key!r}.")
        self.publish(doc["_id"], doc.get(OUTBOX))
        if OBSERVED_FIELD in doc:
            # Only a cluster's OBSERVED_SCANS_KEPT newest scans keep what they
            # observed: the cluster lists them (ClusterStore.record_scan) and
            # says which to let go, a few at a time (OBSERVED_SCANS_SPARE);
            # a scan posted late, behind what the cluster holds, at once.
            let_go = [doc["_id"]] if recorded.late else recorded.let_go
            if let_go:  # one write for them all
                self.collection.update_many({"_id": {"$in": let_go}},
                                            {"$unset": {OBSERVED_FIELD: ""}})
                if doc["_id"] in let_go:
                    del doc[OBSERVED_FIELD]
        self._maybe_trim(cluster["id"])
        return self.to_api(doc)

    def _maybe_trim(self, cluster_id):
        """Trim the cluster once every tenth of the count's scans recorded
        here (every scan for a count under 20): a POST walks the cluster's
        keys amortized, not each time, and the cluster holds at most a tenth
        more than the count between trims."""
        recorded = self._since_trim.get(cluster_id, 0) + 1
        if recorded >= max(1, self.retention_count // 10):
            self._since_trim.pop(cluster_id, None)
            self.trim(cluster_id)
        else:
            self._since_trim[cluster_id] = recorded

    def owner(self, doc, parent=None):
        return parent.get("organization")

    def trim(self, cluster_id):
        """Keep the cluster's `retention_count` newest scans."""
        lower, upper = self.key_range(cluster_id)
        beyond = list(self.collection.find({"_id": {"$gt": lower, "$lt": upper}}, {"_id": 1},
                                           sort=[("_id", -1)], skip=self.retention_count,
                                           limit=1))
        if beyond:
            self.collection.delete_many({"_id": {"$gt": lower, "$lte": beyond[0]["_id"]}})

    def marked(self, shared):
        return []  # scans are never marked: they go with their cluster, by key range

    def delete_under(self, parents):
        """A cluster's scans go with it, without events: one range delete
        of its keys each."""
        for cluster in parents:
            lower, upper = self.key_range(cluster["id"])
            self.collection.delete_many({"_id": {"$gt": lower, "$lt": upper}})


def stored_observations(body):
    """What a scan's body observed, as stored: its `agent` (AGENT_FIELD,
    which every scan keeps) and the rest (OBSERVED_FIELD, the newest
    scans') as one JSON string each: read whole, never queried, it costs
    the embedded store one string, not the objects it holds (the agent's
    map was 440 bytes of memory a scan, 350 MB more at a million scans, its
    string 90), and a map's keys (versions, `v1.30.4`) are no document's
    keys (FerretDB refuses a `.` in them)."""
    stored = {}
    if body.get("agent") is not None:
        stored[AGENT_FIELD] = orjson.dumps(body["agent"]).decode()
    observed = {name: body[name] for name in KEPT_OBSERVATIONS if body.get(name) is not None}
    if observed:
        stored[OBSERVED_FIELD] = orjson.dumps(observed).decode()
    return stored


def _agent_of(doc):
    if AGENT_FIELD in doc:
        return orjson.loads(doc[AGENT_FIELD])
    return copied(doc.get("agent"))  # stored as a map before
