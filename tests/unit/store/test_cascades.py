"""Forced deletes as the store makes them: a batch at a time, whatever the
subtree's size; finished when their process died; children found as their
spec declares them."""
import pytest

from inventory.core.errors import HasChildren
from inventory.core.spec import ResourceSpec
from inventory.store import deletes
from inventory.store.base import ResourceStore
from inventory.store.records import DELETING, FORCED

PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}
BATCH = 3


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    monkeypatch.setattr(deletes, "CASCADE_BATCH", BATCH)


def _estate(store, platforms=2, clusters=7, scans=2):
    """An organization with `platforms` platforms of `clusters` clusters of `scans` scans."""
    org = store.organizations.create({"title": "Acme", "description": ""}, "t")
    for p in range(platforms):
        store.platforms.create({"name": f"acme-p{p}", "organization": org["id"], **PLATFORM}, "t")
        for c in range(clusters):
            store.clusters.create({"name": f"acme-p{p}-c{c}", "platform": f"acme-p{p}",
                                   "environment": "dev", "version": "1.30", "labels": {}}, "t")
            for s in range(scans):
                store.scans.create(f"acme-p{p}-c{c}", 100 + s)
    store.tokens.create({"name": "scoped", "role": "reader", "organization": org["id"]}, "t")
    return org


def _counts(store):
    return {name: store.db[name].count_documents({})
            for name in ("organizations", "platforms", "clusters", "scans", "tokens")}


class WriteSizes:
    """Wraps a collection and records how many records each multi-record write touched."""

    def __init__(self, collection, sizes):
        self._collection, self.sizes = collection, sizes

    def update_many(self, *args, **kwargs):
        result = self._collection.update_many(*args, **kwargs)
        self.sizes.append(result.matched_count)
        return result

    def delete_many(self, *args, **kwargs):
        result = self._collection.delete_many(*args, **kwargs)
        self.sizes.append(result.deleted_count)
        return result

    def find(self, *args, **kwargs):
        found = self._collection.find(*args, **kwargs)
        self.sizes.append(len(found))
        return found

    def __getattr__(self, name):
        return getattr(self._collection, name)


def test_a_forced_delete_writes_and_reads_a_batch_at_a_time_and_leaves_nothing(store):
    org = _estate(store, platforms=2, clusters=7, scans=2)
    sizes = []
    for resource in (store.organizations, store.platforms, store.clusters, store.tokens):
        resource.collection = WriteSizes(resource.collection, sizes)
    store.organizations.delete(org["id"], force=True)
    assert _counts(store) == {"organizations": 0, "platforms": 0, "clusters": 0, "scans": 0,
                              "tokens": 0}
    # 14 clusters went, in batches: no write or read of the cascade touched more than a batch
    assert sizes and max(sizes) <= BATCH
    assert sum(1 for size in sizes if size == BATCH) >= 14 // BATCH


def test_a_forced_delete_frees_the_quota_and_writes_one_event_per_record(store, client):
    org = _estate(store, platforms=2, clusters=7, scans=1)
    before = client.get("/events?limit=100").get_json()["results"]
    store.organizations.delete(org["id"], force=True)
    events = [event for event in client.get(
        f"/events?limit=100&after={before[-1]['id']}").get_json()["results"]]
    deleted = [event["type"] for event in events]
    assert deleted.count("kubecluster.deleted") == 14
    assert deleted.count("kubeplatform.deleted") == 2
    assert deleted.count("token.deleted") == 1
    assert deleted[-1] == "organization.deleted"  # the parent's after all of its children's
    assert len({event["subject"] for event in events}) == len(events)  # each once


def test_an_unforced_repeat_finishes_a_forced_delete_rather_than_undoing_it(store):
    org = _estate(store, platforms=1, clusters=4, scans=1)
    # a forced delete under way (or interrupted): its root marked, part of it gone
    store.organizations.mark_deleting({"_id": org["id"]}, forced=True)
    store.platforms.mark_deleting({"_id": "acme-p0"}, forced=True)
    store.clusters.delete_where({"_id": "acme-p0-c0"})
    store.organizations.delete(org["id"])  # no force: it finishes what was asked
    assert _counts(store) == {"organizations": 0, "platforms": 0, "clusters": 0, "scans": 0,
                              "tokens": 0}


def test_the_store_finishes_interrupted_deletes_as_they_were_asked(store):
    forced = _estate(store, platforms=2, clusters=4, scans=1)
    kept = store.organizations.create({"title": "Kept", "description": ""}, "t")
    store.platforms.create({"name": "kept-p", "organization": kept["id"], **PLATFORM}, "t")
    # a forced delete that died midway, and an unforced one that died after its mark
    store.organizations.mark_deleting({"_id": forced["id"]}, forced=True)
    store.platforms.mark_deleting({"_id": "acme-p0"}, forced=True)
    store.clusters.delete_where({"_id": {"$in": ["acme-p0-c0", "acme-p0-c1"]}})
    store.clusters.mark_deleting({"_id": "acme-p0-c2"}, forced=True)
    store.organizations.mark_deleting({"_id": kept["id"]})
    # the first look of a process that shares its database only notes them
    marked = store.finish_interrupted_deletes(only=set())
    assert ("organizations", forced["id"]) in marked and ("clusters", "acme-p0-c2") in marked
    assert store.db.clusters.count_documents({}) == 6
    # a later look finishes those still marked
    assert store.finish_interrupted_deletes(only=marked)
    assert store.db.organizations.find_one({"_id": forced["id"]}) is None
    assert store.db.platforms.count_documents({"organization": forced["id"]}) == 0
    assert store.db.clusters.count_documents({}) == 0 and store.db.scans.count_documents({}) == 0
    restored = store.db.organizations.find_one({"_id": kept["id"]})
    assert restored is not None and DELETING not in restored  # it has a platform: undone
    assert store.finish_interrupted_deletes() == set()


def test_a_delete_under_way_is_not_undone_by_the_finisher(store):
    org = _estate(store, platforms=1, clusters=2, scans=0)
    store.organizations.mark_deleting({"_id": org["id"]}, forced=True)
    assert store.db.organizations.find_one({"_id": org["id"]})[DELETING] == FORCED
    store.finish_interrupted_deletes()
    assert _counts(store)["clusters"] == 0


def test_a_child_is_found_by_what_its_spec_says_it_holds(app, store):
    """A resource below clusters that holds its cluster's id (as scans do)
    and refuses its parent's unforced delete: declared once, in its spec."""
    spec = ResourceSpec(name="namespaces", kind="namespace", parent="clusters",
                        parent_field="cluster", parent_holds="id")
    namespaces = type("NamespaceStore", (ResourceStore,), {"spec": spec})(store.db)
    namespaces.events = None
    store.clusters.children = (*store.clusters.children, namespaces)
    _estate(store, platforms=1, clusters=1, scans=1)
    cluster = store.db.clusters.find_one({"_id": "acme-p0-c0"})
    namespaces.collection.insert_one({"_id": "ns1", "cluster": cluster["id"]})
    with pytest.raises(HasChildren, match="namespaces"):
        store.clusters.delete("acme-p0-c0")
    store.clusters.delete("acme-p0-c0", force=True)
    assert namespaces.collection.count_documents({}) == 0
    assert store.db.scans.count_documents({}) == 0


def test_a_parent_and_its_field_are_declared_together():
    with pytest.raises(ValueError):
        ResourceSpec(name="orphans", kind="orphan", parent="clusters")
