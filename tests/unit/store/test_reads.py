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
