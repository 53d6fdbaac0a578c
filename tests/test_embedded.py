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


PAGE_QUERIES = [
    {}, {"_deleting": {"$exists": False}}, {"_id": {"$gt": "k05"}}, {"_id": {"$gte": "k05"}},
    {"_id": {"$gt": "k03", "$lt": "k09"}}, {"_id": {"$gt": "k03", "$lte": "k09"}},
    {"_id": {"$gt": "k03"}, "group": 1}, {"$and": [{"_id": {"$gt": "k01"}}, {"_id": {"$lt": "k07"}}]},
    {"group": {"$in": [0, 2]}, "_deleting": {"$exists": False}}, {"_id": {"$eq": "k04"}},
    {"_id": {"$gt": "zz"}}, {"$or": [{"group": 1}, {"_id": "k00"}]},
]


@pytest.mark.parametrize("query", PAGE_QUERIES)
@pytest.mark.parametrize("limit", [1, 3, 50])
@pytest.mark.parametrize("projection", [None, {"_id": 1}, {"_id": 1, "group": 1}])
@pytest.mark.parametrize("skip", [0, 2, 30])
def test_pages_in_id_order_match_mongomock_through_writes(query, limit, projection, skip):
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(plain)
    order = [7, 3, 11, 0, 5, 9, 1, 4, 8, 2, 10, 6]
    for i in order:
        locked.insert_one({"_id": f"k{i:02d}", "group": i % 3,
                           **({"_deleting": True} if i == 5 else {})})

    def same():
        expected = list(plain.find(query, projection, sort=[("_id", 1)], limit=limit, skip=skip))
        assert locked.find(query, projection, sort=[("_id", 1)], limit=limit,
                           skip=skip) == expected

    same()
    locked.delete_one({"_id": "k04"})
    locked.insert_one({"_id": "k035", "group": 1})
    same()
    locked.update_many({}, {"$set": {"group": 2}})
    same()


@pytest.mark.parametrize("query", [
    {"code": "x1"}, {"code": "nope"}, {"code": "x2", "_deleting": {"$exists": False}},
    {"code": "x1", "_deleting": {"$exists": False}}, {"code": "x3", "group": 0},
    {"plain": "p1"}, {"code": {"$in": ["x1"]}},
])
@pytest.mark.parametrize("unique", [True, False])
def test_reads_by_an_indexed_field_match_mongomock_through_writes(query, unique):
    plain = mongomock_ng.MongoClient().db.things
    plain.create_index("code", unique=unique)
    locked = LockedCollection(plain)
    for i in range(1, 5):
        locked.insert_one({"_id": f"k{i}", "code": f"x{i}", "plain": f"p{i}", "group": i % 2,
                           **({"_deleting": True} if i == 2 else {})})
    assert locked.find_one(query) == plain.find_one(query)
    locked.delete_one({"_id": "k1"})
    locked.insert_one({"_id": "k9", "code": "x1", "plain": "p9", "group": 1})
    assert locked.find_one(query) == plain.find_one(query)
    if not unique:  # several documents share a value: the first in insertion order wins
        locked.insert_one({"_id": "k0", "code": "x1", "plain": "p0", "group": 0})
        locked.insert_one({"_id": "k8", "code": "x3", "plain": "p8", "group": 0})
        assert locked.find_one(query) == plain.find_one(query)
