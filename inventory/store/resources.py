"""The four resource collections and their data rules."""
import secrets
import time
from datetime import datetime, timezone

from inventory import ordering
from inventory.errors import InvalidRecord, InvalidReference, NotAllowed, NotFound
from inventory.ids import new_id
from inventory.labels import MAX_LABELS
from inventory.store.base import (
    LIVE,
    REVISION,
    Record,
    ResourceStore,
    all_of,
    new_revision,
)
from inventory.versions import version_key

AUDIT_FIELDS = {"created_by": "string", "created_on": "timestamp",
                "last_modified_by": "string", "last_modified_on": "timestamp"}


class OrganizationStore(ResourceStore):
    collection_name = "organizations"
    kind = "organization"
    key_field = "id"
    child_field = "organization"
    scope_field = "_id"
    filter_fields = {"id": "string", "title": "string", "description": "string", **AUDIT_FIELDS}
    orderings = ordering.ORGANIZATIONS
    tokens = None  # the token collection, set by Store

    def to_api(self, doc):
        record = super().to_api(doc)
        record["quotas"] = self.quotas.effective(doc)
        return record

    def create(self, body, principal, scope=None):
        if scope is not None:
            raise NotAllowed("A token scoped to one organization cannot create organizations.")
        doc = {"_id": new_id("org"), **body, **self.audit_new(principal)}
        self.insert(doc)
        return self.to_api(doc)

    def update(self, key, changes, principal, scope=None, revisions=None):
        if "quotas" in changes and scope is not None:
            raise NotAllowed("Only an admin not scoped to an organization may change its quotas.")
        return super().update(key, changes, principal, scope, revisions)

    def live_parent(self, org, scope=None):
        """The stored organization a new record will belong to, or a 422 at
        `body.organization`."""
        doc = self.find_doc(org, scope)
        if doc is None:
            raise InvalidReference("organization", "No such organization.", org)
        return doc

    def delete_children(self, docs):
        """Platforms (and below), and the tokens scoped to the organization:
        tokens are children too, made by the same protocol."""
        super().delete_children(docs)
        if docs:
            self.tokens.collection.delete_many({"organization": {"$in": [d["_id"] for d in docs]}})


class PlatformStore(ResourceStore):
    collection_name = "platforms"
    kind = "platform"
    key_field = "name"
    child_field = "platform"
    scope_field = "organization"
    quota_kind = "platforms"
    immutable_fields = ("name", "organization")
    filter_fields = {"name": "string", "organization": "string", "title": "string",
                     "description": "string", "control_plane.provider": "string",
                     "infrastructure.cloud.provider": "string", **AUDIT_FIELDS}
    orderings = ordering.PLATFORMS
    organizations = None  # the parent collection, set by Store

    def create(self, body, principal, scope=None):
        org = self.organizations.live_parent(body["organization"], scope)
        # `_uid` tells this platform from a later one that takes its name
        doc = {"_id": body["name"], "_uid": secrets.token_hex(8),
               **{k: v for k, v in body.items() if k != "name"}, **self.audit_new(principal)}
        self.insert_under(doc, self.organizations, org, InvalidReference(
            "organization", "The organization was deleted meanwhile.", org["_id"]),
            org_id=org["_id"])
        return self.to_api(doc)

    def identity(self, doc):
        # a platform's name can be taken again once it is deleted
        return {"_id": doc["_id"], "_uid": doc.get("_uid")}

    def reservation_id(self, doc):
        return doc["_uid"]


class ClusterStore(ResourceStore):
    collection_name = "clusters"
    kind = "cluster"
    key_field = "name"
    scope_field = "organization"
    quota_kind = "clusters"
    immutable_fields = ("name", "platform")
    filter_fields = {"name": "string", "id": "string", "platform": "string",
                     "organization": "string", "environment": "string",
                     "version": "version", "title": "string", "description": "string",
                     "labels": "labels", "last_scanned_on": "integer", **AUDIT_FIELDS}
    orderings = ordering.CLUSTERS
    platforms = None  # the parent collection, set by Store

    def stored_name(self, field):
        # versions compare through a sortable key kept beside them
        return "_version_key" if field == "version" else super().stored_name(field)

    def key_filter(self, key):
        # Addressable by slug or by `k8scl_` id; slugs cannot contain "_".
        return {"id": key} if key.startswith("k8scl_") else {"_id": key}

    def to_api(self, doc):
        record = super().to_api(doc)
        record.setdefault("last_scanned_on", None)
        return record

    def create(self, body, principal, scope=None):
        platform_name = body["platform"]
        platform = self.platforms.find_doc(platform_name, scope)
        if platform is None:
            raise InvalidReference("platform", "No such platform.", platform_name)
        doc = {"_id": body["name"], "id": new_id("k8scl"),
               **{k: v for k, v in body.items() if k != "name"},
               "organization": platform["organization"], **self.audit_new(principal),
               "_version_key": version_key(body["version"])}
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

    def update(self, key, changes, principal, scope=None, revisions=None):
        if "version" in changes:
            changes = {**changes, "_version_key": version_key(changes["version"])}
        return super().update(key, changes, principal, scope, revisions)

    def has_children(self, stored_key):
        return False  # scans always go with their cluster

    def delete_children(self, docs):
        for doc in docs:
            self.children.delete_of_cluster(doc["id"])

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

    collection_name = "scans"
    kind = "scan"
    key_field = "_key"  # scans are never addressed by key; to_api drops it
    filter_fields = {"id": "string", "cluster": "string", "scanned_on": "integer"}
    orderings = ordering.SCANS
    clusters = None  # the parent collection, set by Store

    def __init__(self, db, retention_days=365, retention_count=1000):
        super().__init__(db)
        self.retention_days, self.retention_count = retention_days, retention_count

    def order_field(self, ordering):
        return "_id"  # a cluster's keys are in `scanned_on` order already

    def list_of_cluster(self, cluster_id, tree, after, limit, ordering=None, backwards=False):
        lower, upper = self.key_range(cluster_id)
        return self.find_page(self.compile_filter(tree), after, limit, lower=lower, upper=upper,
                              backwards=backwards)

    def to_api(self, doc):
        record = Record(id=doc["id"], cluster=doc["cluster"], scanned_on=doc["scanned_on"])
        record.revision = doc.get(REVISION)
        return record

    @staticmethod
    def key_range(cluster_id):
        # "/" < "0" in ASCII: every key of this cluster lies strictly between
        return f"{cluster_id}/", f"{cluster_id}0"

    def get_of_cluster(self, cluster_id, scan_id):
        doc = self.collection.find_one({"id": scan_id, "cluster": cluster_id})
        if doc is None:
            raise NotFound(f"No scan {scan_id!r} of this cluster.")
        return self.to_api(doc)

    @staticmethod
    def key(cluster_id, scanned_on, scan_id):
        return f"{cluster_id}/{scanned_on:012d}/{scan_id}"

    def create(self, cluster_key, scanned_on=None, scope=None):
        """Record a scan of the cluster at `cluster_key` (name or id)."""
        cluster = self.clusters.get_doc(cluster_key, scope)
        scanned_on = int(time.time()) if scanned_on is None else scanned_on
        scan_id = new_id("k8scs")
        doc = {"_id": self.key(cluster["id"], scanned_on, scan_id), "id": scan_id,
               "cluster": cluster["id"], "scanned_on": scanned_on,
               self.TIME_FIELD: datetime.now(timezone.utc).replace(tzinfo=None)}
        self.insert(doc)
        # The cluster's update doubles as the check that it still exists.
        if not self.clusters.record_scan_time(cluster, scanned_on):
            self.collection.delete_one({"_id": doc["_id"]})
            raise NotFound(f"No cluster {cluster_key!r}.")
        self.trim(cluster["id"])
        return self.to_api(doc)

    def trim(self, cluster_id):
        """Keep the cluster's `retention_count` newest scans."""
        lower, upper = self.key_range(cluster_id)
        beyond = list(self.collection.find({"_id": {"$gt": lower, "$lt": upper}}, {"_id": 1},
                                           sort=[("_id", -1)], skip=self.retention_count,
                                           limit=1))
        if beyond:
            self.collection.delete_many({"_id": {"$gt": lower, "$lte": beyond[0]["_id"]}})

    def delete_of_cluster(self, cluster_id):
        lower, upper = self.key_range(cluster_id)
        self.collection.delete_many({"_id": {"$gt": lower, "$lt": upper}})
