"""Deletes as the store makes them (inventory/store/deletes.py): forced ones
a batch at a time, whatever the subtree's size; a repeat finishes what a
dead process began; children found as their spec declares them."""
import pytest

from inventory.core.errors import HasChildren
from inventory.core.spec import ResourceSpec
from inventory.store import deletes
from inventory.store.base import ResourceStore
from inventory.store.records import DELETING
from tests.support.stores import counts, estate

BATCH = 3


@pytest.fixture(autouse=True)
def small_batches(monkeypatch):
    monkeypatch.setattr(deletes, "CASCADE_BATCH", BATCH)


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
    org = estate(store, platforms=2, clusters=7, scans=2)
    sizes = []
    for resource in (store.organizations, store.platforms, store.clusters, store.tokens):
        resource.collection = WriteSizes(resource.collection, sizes)
    store.organizations.delete(org["id"], force=True)
    assert counts(store) == {"organizations": 0, "platforms": 0, "clusters": 0, "scans": 0,
                              "tokens": 0}
    # 14 clusters went, in batches: no write or read of the cascade touched more than a batch
    assert sizes and max(sizes) <= BATCH
    assert sum(1 for size in sizes if size == BATCH) >= 14 // BATCH


def test_a_forced_delete_frees_the_quota_and_writes_one_event_per_record(store, client):
    org = estate(store, platforms=2, clusters=7, scans=1)
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
    org = estate(store, platforms=1, clusters=4, scans=1)
    # a forced delete under way (or interrupted): its root marked, part of it gone
    store.organizations.mark_deleting({"_id": org["id"]}, forced=True)
    store.platforms.mark_deleting({"_id": "acme-p0"}, forced=True)
    store.clusters.delete_where({"_id": "acme-p0-c0"})
    store.organizations.delete(org["id"])  # no force: it finishes what was asked
    assert counts(store) == {"organizations": 0, "platforms": 0, "clusters": 0, "scans": 0,
                              "tokens": 0}


def test_a_child_is_found_by_what_its_spec_says_it_holds(app, store):
    """A resource below clusters that holds its cluster's id (as scans do)
    and refuses its parent's unforced delete: declared once, in its spec."""
    spec = ResourceSpec(name="namespaces", kind="namespace", parent="clusters",
                        parent_field="cluster", parent_holds="id")
    namespaces = type("NamespaceStore", (ResourceStore,), {"spec": spec})(store.db)
    namespaces.events = None
    store.clusters.children = (*store.clusters.children, namespaces)
    estate(store, platforms=1, clusters=1, scans=1)
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


# -- crash recovery: a repeated DELETE finishes what a dead process began ----


def test_a_crashed_organization_delete_is_finished_by_a_repeat(store):
    org = estate(store, platforms=2, clusters=2, scans=2)
    # the process died after marking, with the first platform's subtree swept
    store.organizations.mark_deleting({"_id": org["id"]})
    store.platforms.delete_where({"_id": "acme-p0"})
    assert store.organizations.find_doc(org["id"]) is None  # reads as gone meanwhile
    assert counts(store) == {"organizations": 1, "platforms": 1, "clusters": 2, "scans": 4,
                            "tokens": 1}
    store.organizations.delete(org["id"], force=True)
    assert counts(store) == {"organizations": 0, "platforms": 0, "clusters": 0, "scans": 0,
                            "tokens": 0}


def test_a_crashed_platform_delete_is_finished_by_a_repeat(store):
    estate(store, platforms=2, clusters=2, scans=2)
    store.platforms.mark_deleting({"_id": "acme-p0"})
    store.clusters.delete_where({"_id": "acme-p0-c0"})  # one cluster of two was swept
    store.clusters.mark_deleting({"_id": "acme-p0-c1"})  # the other marked, not yet swept
    store.platforms.delete("acme-p0", force=True)
    assert store.db.platforms.find_one({"_id": "acme-p0"}) is None
    assert store.db.clusters.count_documents({"platform": "acme-p0"}) == 0
    assert counts(store)["scans"] == 4  # the other platform's, untouched


def test_a_crashed_cluster_delete_is_finished_by_a_repeat(store):
    estate(store, platforms=2, clusters=2, scans=2)
    cluster = store.db.clusters.find_one({"_id": "acme-p0-c0"})
    store.clusters.mark_deleting({"_id": "acme-p0-c0"})
    store.scans.collection.delete_one({"cluster": cluster["id"]})  # one scan of two swept
    store.clusters.delete(cluster["id"])  # by id, as a client may address it
    assert store.db.clusters.find_one({"_id": "acme-p0-c0"}) is None
    assert store.db.scans.count_documents({"cluster": cluster["id"]}) == 0


def test_an_unforced_repeat_of_a_crashed_delete_restores_a_record_with_children(store):
    org = estate(store, platforms=2, clusters=2, scans=2)
    store.organizations.mark_deleting({"_id": org["id"]})
    with pytest.raises(HasChildren):
        store.organizations.delete(org["id"])
    assert store.organizations.get(org["id"])["id"] == org["id"]  # visible again, whole
    assert counts(store)["platforms"] == 2


def test_a_repeat_of_a_crashed_delete_of_a_childless_record_needs_no_force(store):
    org = store.organizations.create({"title": "Alone", "description": ""}, "t")
    store.organizations.mark_deleting({"_id": org["id"]})
    store.organizations.delete(org["id"])
    assert store.db.organizations.find_one({"_id": org["id"]}) is None


def test_unforced_delete_with_children_raises_conflict_and_leaves_no_mark(store, tree):
    org = tree[0]
    with pytest.raises(HasChildren):
        store.organizations.delete(org["id"])
    assert DELETING not in store.organizations.collection.find_one({"_id": org["id"]})
