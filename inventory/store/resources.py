"""The four resource collections and their data rules."""
import heapq
import secrets
import time
from datetime import datetime, timezone

from inventory import ordering
from inventory.errors import (
    ImmutableField,
    InvalidRecord,
    InvalidReference,
    NotAllowed,
    NotFound,
)
from inventory.grouping import MAX_GROUPS
from inventory.ids import new_id
from inventory.labels import MAX_LABELS
from inventory.lifecycle import LIFECYCLES, STATUSES, distribution_of, minor_of, today
from inventory.store import pages
from inventory.store.base import (
    LIVE,
    REVISION,
    Record,
    ResourceStore,
    new_revision,
)
from inventory.store.events import OUTBOX
from inventory.store.pages import all_of
from inventory.store.query import DISTRIBUTION_FIELD, VERSION_KEY_FIELD
from inventory.versions import version_key, version_parts

AUDIT_FIELDS = {"created_by": "string", "created_on": "timestamp",
                "last_modified_by": "string", "last_modified_on": "timestamp"}


class OrganizationStore(ResourceStore):
    collection_name = "organizations"
    kind = "organization"
    event_kind, path = "organization", "organizations"
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
        doc = {"_id": new_id("org"), **body, **self.audit_new(principal), **self.quotas.fresh()}
        self.insert(doc)
        return self.to_api(doc)

    def owner(self, doc, parent=None):
        return doc["_id"]

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
            self.tokens.delete_where({"organization": {"$in": [d["_id"] for d in docs]}})


class PlatformStore(ResourceStore):
    collection_name = "platforms"
    kind = "platform"
    event_kind, path = "kubeplatform", "kubeplatforms"
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

    def update(self, key, changes, principal, scope=None, revisions=None):
        # Its clusters keep a copy of the provider (which lifecycle they
        # follow, what summaries count them by): it never changes, so the
        # copy never goes stale (README, Decisions).
        provider = (changes.get("control_plane") or {}).get("provider")
        if provider is not None and provider != self.get_doc(key, scope)[
                "control_plane"]["provider"]:
            raise ImmutableField("control_plane.provider", self.kind, provider)
        return super().update(key, changes, principal, scope, revisions)

    def reservation_id(self, doc):
        return doc["_uid"]


class ClusterStore(ResourceStore):
    collection_name = "clusters"
    kind = "cluster"
    event_kind, path = "kubecluster", "kubeclusters"
    computed_fields = ("support",)  # from the version and distribution, for today
    key_field = "name"
    scope_field = "organization"
    quota_kind = "clusters"
    immutable_fields = ("name", "platform")
    filter_fields = {"name": "string", "id": "string", "platform": "string",
                     "organization": "string", "environment": "string",
                     "version": "version", "title": "string", "description": "string",
                     "labels": "labels", "last_scanned_on": "integer",
                     "support.status": "support_status", **AUDIT_FIELDS}
    orderings = ordering.CLUSTERS
    platforms = None  # the parent collection, set by Store

    def stored_name(self, field):
        # versions compare through a sortable key kept beside them
        return VERSION_KEY_FIELD if field == "version" else super().stored_name(field)

    def key_filter(self, key):
        # Addressable by slug or by `k8scl_` id; slugs cannot contain "_".
        return {"id": key} if key.startswith("k8scl_") else {"_id": key}

    def to_api(self, doc, day=None):
        record = super().to_api(doc)
        record.setdefault("last_scanned_on", None)
        support = LIFECYCLES.support(doc.get(DISTRIBUTION_FIELD, "upstream"), doc["version"],
                                     day or today())
        record["support"] = support
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
        return {"_provider": provider, DISTRIBUTION_FIELD: distribution_of(provider)}

    def add_missing_distributions(self):
        """Give clusters written before lifecycles existed their platform's
        provider (run by `create-indexes`, so at each release); how many."""
        done = 0
        for doc in self.collection.find({DISTRIBUTION_FIELD: {"$exists": False}},
                                        {"_id": 1, "platform": 1}):
            platform = self.platforms.collection.find_one({"_id": doc["platform"]})
            if platform is not None:
                done += self.collection.update_one(
                    {"_id": doc["_id"], DISTRIBUTION_FIELD: {"$exists": False}},
                    {"$set": self.distribution_fields(platform)}).modified_count
        return done

    def create(self, body, principal, scope=None):
        platform_name = body["platform"]
        platform = self.platforms.find_doc(platform_name, scope)
        if platform is None:
            raise InvalidReference("platform", "No such platform.", platform_name)
        doc = {"_id": body["name"], "id": new_id("k8scl"),
               **{k: v for k, v in body.items() if k != "name"},
               "organization": platform["organization"], **self.audit_new(principal),
               VERSION_KEY_FIELD: version_key(body["version"]),
               **self.distribution_fields(platform)}
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
            changes = {**changes, VERSION_KEY_FIELD: version_key(changes["version"])}
        return super().update(key, changes, principal, scope, self.stored_revisions(revisions))

    def delete(self, key, force=False, scope=None, revisions=None):
        return super().delete(key, force, scope, self.stored_revisions(revisions))

    def has_children(self, stored_key):
        return False  # scans always go with their cluster

    # -- summaries ------------------------------------------------------------
    # group_by field -> the stored fields its value is made of
    _GROUPED = {"organization": ("organization",), "platform": ("platform",),
                "environment": ("environment",), "version": (VERSION_KEY_FIELD,),
                "control_plane.provider": ("_provider",),
                "support.status": (DISTRIBUTION_FIELD, VERSION_KEY_FIELD)}

    def summary(self, tree, group_by, scope=None):
        """([(key, count)], total): the live clusters matching the parsed
        filter `tree` in the caller's scope, counted by the `group_by`
        fields (inventory.grouping), in descending count, then key order;
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
            for path in self._GROUPED.get(field, (field,)):  # labels.<key> as is
                stored.setdefault(path, f"g{len(stored)}")
        query = all_of(self.scope_filter(scope), self.compile_filter(tree), LIVE)
        rows = self.collection.aggregate([
            {"$match": query},
            {"$group": {"_id": {name: f"${path}" for path, name in stored.items()},
                        "count": {"$sum": 1}}}])
        values_of = [self._group_values(field, stored, today()) for field in group_by]
        counts = {}
        for row in rows:
            key = tuple([value_of(row["_id"]) for value_of in values_of])
            counts[key] = counts.get(key, 0) + row["count"]
        orders = [_GROUP_ORDERS.get(field, _text_order) for field in group_by]

        def order(item):
            return -item[1], [order(value) for order, value in zip(orders, item[0])]
        groups = sorted(counts.items(), key=order) if len(counts) <= MAX_GROUPS else \
            heapq.nsmallest(MAX_GROUPS, counts.items(), key=order)
        return ([(dict(zip(group_by, key)), count) for key, count in groups],
                sum(counts.values()))

    @staticmethod
    def _group_values(field, stored, day):
        """A function giving `field`'s value from an aggregation row's key."""
        if field not in ("version", "support.status"):
            name = stored[ClusterStore._GROUPED.get(field, (field,))[0]]
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


# Where a group's value sorts among its field's: a missing value first,
# versions as versions, statuses in lifecycle order, text by code point.
def _text_order(value):
    return (0, "") if value is None else (1, value)


_GROUP_ORDERS = {
    "version": lambda value: (0,) if value is None else (1, *version_parts(value)),
    "support.status": STATUSES.index,
}


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
    event_kind = "kubeclusterscan"
    removal_events = False  # scans go with their cluster, or by retention, silently
    key_field = "_key"  # scans are never addressed by key; to_api drops it
    filter_fields = {"id": "string", "cluster": "string", "scanned_on": "integer"}
    orderings = ordering.SCANS
    clusters = None  # the parent collection, set by Store

    def __init__(self, db, retention_days=365, retention_count=1000):
        super().__init__(db)
        self.retention_days, self.retention_count = retention_days, retention_count

    def order_field(self, ordering):
        return "_id"  # a cluster's keys are in `scanned_on` order already

    def list_of_cluster(self, cluster_id, request):
        """A page of the cluster's scans: a range of keys (their `scanned_on`
        order). The request's scope was applied when the cluster was found."""
        lower, upper = self.key_range(cluster_id)
        return pages.walk(self.collection, request, self.to_api,
                          query=self.compile_filter(request.tree), visible=LIVE,
                          lower=lower, upper=upper)

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
        self.insert(doc, publish=False, parent=cluster)
        # The cluster's update doubles as the check that it still exists.
        if not self.clusters.record_scan_time(cluster, scanned_on):
            self.collection.delete_one({"_id": doc["_id"]})
            raise NotFound(f"No cluster {cluster_key!r}.")
        self.publish(doc["_id"], doc.get(OUTBOX))
        self.trim(cluster["id"])
        return self.to_api(doc)

    def subject(self, doc, parent=None):
        return f"/kubeclusters/{parent['_id']}/scans/{doc['id']}"

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

    def delete_of_cluster(self, cluster_id):
        lower, upper = self.key_range(cluster_id)
        self.collection.delete_many({"_id": {"$gt": lower, "$lt": upper}})
