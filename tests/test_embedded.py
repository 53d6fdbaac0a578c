"""The embedded store's keyed reads answer exactly what mongomock would."""
import mongomock_ng
import pytest

from inventory.store.embedded import LockedCollection

DOCS = [{"_id": "a", "x": 1, "_deleting": True, "nested": {"y": [1, 2]}},
        {"_id": "b", "x": 2, "organization": "o1", "_rev": "r1"},
        {"_id": "c", "x": 3, "organization": "o2", "_rev": "r2"}]


@pytest.fixture
def collections():
    plain = mongomock_ng.MongoClient().db.things
    plain.insert_many([dict(d) for d in DOCS])
    return plain, LockedCollection(plain)


@pytest.mark.parametrize("query", [
    {"_id": "b"}, {"_id": "zz"}, {"_id": "a", "_deleting": {"$exists": False}},
    {"_id": "b", "_deleting": {"$exists": False}}, {"_id": "b", "organization": "o2"},
    {"_id": "c", "_rev": {"$in": ["r1", "r2"]}}, {"_id": "c", "$or": [{"x": 1}, {"x": 3}]},
    {"$and": [{"_id": "b"}, {"_id": "c"}]}, {"_id": {"$gt": "a"}}, {"x": 2}, {},
])
@pytest.mark.parametrize("projection", [None, {"_id": 1}, {"_id": 1, "_rev": 1}, {"x": 0}])
def test_find_one_matches_mongomock(collections, query, projection):
    plain, locked = collections
    assert locked.find_one(query, projection) == plain.find_one(query, projection)


def test_find_one_returns_a_copy(collections):
    plain, locked = collections
    found = locked.find_one({"_id": "a"})
    found["nested"]["y"].append(3)
    assert plain.find_one({"_id": "a"})["nested"]["y"] == [1, 2]
