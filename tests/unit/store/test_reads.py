"""Reads (inventory/store/reads.py): records to be shown are read from the
resource's own collection, on MongoDB as on the embedded store."""
import pytest

from inventory.store.pages import PageRequest
from tests.support import stores


@pytest.fixture
def mongodb_like_store():
    """A store over a collection that is not the embedded store's
    (tests.support.stores)."""
    return stores.mongodb_like_store()


def test_records_are_shown_from_their_own_collection_on_mongodb(mongodb_like_store):
    import pymongo

    from inventory.store.connection import Guarded

    store = mongodb_like_store
    org = store.organizations.create({"title": "Acme", "description": ""}, "t")
    assert store.organizations.get(org["id"])["title"] == "Acme"
    assert [r["id"] for r in store.organizations.list(PageRequest(10)).records] == [org["id"]]
    # as the service reaches MongoDB (no server needed to name the collection read)
    guarded = Guarded(pymongo.MongoClient(connect=False)["db"])
    store.platforms.collection = guarded["platforms"]
    assert store.platforms.shown.unguarded.full_name == "db.platforms"


def test_a_scoped_caller_reads_only_its_organizations_live_records(store):
    from inventory.core.errors import NotFound
    from tests.support.stores import PLATFORM

    mine = store.organizations.create({"title": "Mine", "description": ""}, "t")
    theirs = store.organizations.create({"title": "Theirs", "description": ""}, "t")
    for name, org in (("p-mine", mine), ("p-theirs", theirs)):
        store.platforms.create({"name": name, "organization": org["id"], **PLATFORM}, "t")
    assert store.platforms.get("p-mine", scope=mine["id"])["name"] == "p-mine"
    with pytest.raises(NotFound, match="No platform 'p-theirs'"):
        store.platforms.get("p-theirs", scope=mine["id"])
    page = store.platforms.list(PageRequest(10, scope=mine["id"]))
    assert [record["name"] for record in page.records] == ["p-mine"]
    store.platforms.mark_deleting({"_id": "p-mine"})  # a delete under way: gone to readers
    assert store.platforms.find_doc("p-mine") is None
    assert store.platforms.list(PageRequest(10, scope=mine["id"])).records == []


def test_a_nested_child_is_read_under_its_own_parent_only(store, tree):
    from inventory.core.errors import NotFound

    _, _, cluster, scan = tree
    under = store.scans.parent_value(store.clusters.get_doc("c1"))
    assert store.scans.get_under(under, scan["id"])["id"] == scan["id"]
    assert [s["id"] for s in store.scans.list_under(under, PageRequest(5)).records] == [
        scan["id"]]
    with pytest.raises(NotFound, match="of this cluster"):
        store.scans.get_under("k8scl_other", scan["id"])
