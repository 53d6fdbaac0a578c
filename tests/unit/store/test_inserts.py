"""Creates (inventory/store/inserts.py): a key is taken once; a record
created under a parent that went meanwhile is undone and leaves nothing."""
import pytest

from inventory.core.errors import InvalidReference, KeyInUse, NotFound
from tests.support.stores import PLATFORM


def test_duplicate_slug_raises_duplicate(store, tree):
    org = tree[0]
    with pytest.raises(KeyInUse):
        store.platforms.create({"name": "p1", "organization": org["id"], **PLATFORM}, "t")


def test_cluster_id_index_is_unique(store, tree):
    from pymongo.errors import DuplicateKeyError

    cluster = tree[2]
    with pytest.raises(DuplicateKeyError):
        store.clusters.collection.insert_one({"_id": "other", "id": cluster["id"]})


def test_child_created_under_a_parent_being_deleted_is_undone(store, tree):
    org, platform, _, _ = tree
    store.platforms.mark_deleting({"_id": platform["name"]})
    read = store.db.platforms.find_one({"_id": "p1"})
    with pytest.raises(InvalidReference):
        store.clusters.insert_under({"_id": "late", "id": "k8scl_late", "platform": "p1",
                                     "version": "1.30"},
                                    store.platforms, read, InvalidReference("platform", "gone"))
    assert store.clusters.collection.find_one({"_id": "late"}) is None


def test_scan_posted_after_its_cluster_went_leaves_nothing(store, tree):
    _, _, cluster, _ = tree
    store.clusters.mark_deleting({"_id": cluster["name"]})
    with pytest.raises(NotFound):
        store.scans.create(cluster["name"], 200)
    assert store.scans.collection.count_documents({"scanned_on": 200}) == 0


# -- interleavings, made deterministic: another writer acts between a
# create's read of the parent and its own writes -------------------------


def _after_reading(monkeypatch, parent_store, method, meanwhile):
    """Make `parent_store.method` (the create's read of its parent) run
    `meanwhile()` after reading and before the create goes on."""
    real = getattr(parent_store, method)

    def read_then_interleave(*args, **kwargs):
        found = real(*args, **kwargs)
        monkeypatch.setattr(parent_store, method, real)  # once
        meanwhile()
        return found
    monkeypatch.setattr(parent_store, method, read_then_interleave)


def test_a_scan_of_a_cluster_replaced_meanwhile_is_refused_and_leaves_nothing(store, tree,
                                                                              monkeypatch):
    _, _, cluster, _ = tree
    replacement = {}

    def replace():
        store.clusters.delete(cluster["name"])
        replacement.update(store.clusters.create({"name": cluster["name"], "platform": "p1",
                                                  "environment": "dev", "version": "1.30",
                                                  "labels": {}}, "t"))
    _after_reading(monkeypatch, store.clusters, "get_doc", replace)
    with pytest.raises(NotFound):
        store.scans.create(cluster["name"], 999)
    assert store.scans.collection.count_documents({"scanned_on": 999}) == 0
    assert store.clusters.get(cluster["name"])["last_scanned_on"] is None  # the new one's


def test_a_cluster_on_a_platform_replaced_by_another_organization_is_refused(store, tree,
                                                                            monkeypatch):
    org, platform, _, _ = tree
    other = store.organizations.create({"title": "Other", "description": ""}, "t")

    def replace():
        store.platforms.delete(platform["name"], force=True)
        store.platforms.create({"name": platform["name"], "organization": other["id"],
                                **PLATFORM}, "t")
    _after_reading(monkeypatch, store.platforms, "find_doc", replace)
    with pytest.raises(InvalidReference):
        store.clusters.create({"name": "late", "platform": platform["name"],
                               "environment": "dev", "version": "1.30", "labels": {}}, "t",
                              scope=org["id"])
    assert store.db.clusters.find_one({"_id": "late"}) is None
    store.platforms.delete(platform["name"], scope=other["id"])  # nothing of org's below it


def test_a_token_of_an_organization_deleted_meanwhile_is_refused(store, tree, monkeypatch):
    org = tree[0]
    _after_reading(monkeypatch, store.organizations, "find_doc",
                   lambda: store.organizations.delete(org["id"], force=True))
    with pytest.raises(InvalidReference):
        store.tokens.create({"name": "late", "role": "reader", "organization": org["id"]}, "t")
    assert store.tokens.collection.count_documents({"organization": org["id"]}) == 0
