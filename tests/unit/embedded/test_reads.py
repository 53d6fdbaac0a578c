"""The embedded collection's reads (inventory/embedded/reads.py): by key,
pages in one field's order, uncopied; the same answers as mongomock's."""

import mongomock_ng
import pytest

from inventory.embedded.collection import LockedCollection
from tests.support.mongomock_pairs import pair


@pytest.mark.parametrize("query", [
    {"_id": "b"}, {"_id": "zz"}, {"_id": "a", "_deleting": {"$exists": False}},
    {"_id": "b", "_deleting": {"$exists": False}}, {"_id": "b", "organization": "o2"},
    {"_id": "c", "_rev": {"$in": ["r1", "r2"]}}, {"_id": "c", "$or": [{"x": 1}, {"x": 3}]},
    {"$and": [{"_id": "b"}, {"_id": "c"}]}, {"_id": {"$gt": "a"}}, {"x": 2}, {},
])
@pytest.mark.parametrize("projection", [None, {"_id": 1}, {"_id": 1, "_rev": 1}, {"x": 0},
                                        {"x": 1, "_id": 0}])
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


ORDER_QUERIES = [
    {}, {"_deleting": {"$exists": False}}, {"o": {"$gt": "o05"}}, {"o": {"$lt": "o05"}},
    {"o": {"$gte": "o03", "$lte": "o09"}}, {"o": {"$gt": "o03", "$lt": "o09"}, "group": 1},
    {"o": {"$lt": "o08"}, "_id": {"$gt": "k02"}}, {"o": {"$gt": 5}}, {"o": {"$gt": "zz"}},
    {"$or": [{"group": 1}, {"o": "o00"}]},
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


@pytest.mark.parametrize("query", ORDER_QUERIES)
@pytest.mark.parametrize("sort", [[("o", 1)], [("o", -1)], [("_id", -1)]])
@pytest.mark.parametrize("limit, skip", [(1, 0), (3, 2), (50, 0), (2, 30)])
@pytest.mark.parametrize("projection", [None, {"o": 1, "_id": 0}])
def test_pages_in_another_order_match_mongomock_through_writes(query, sort, limit, skip,
                                                               projection):
    """Walks of an order key's field, forwards and backwards, and of `_id`
    backwards: the order a page in `order_by` order is read in."""
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(plain)
    for i in [7, 3, 11, 0, 5, 9, 1, 4, 8, 2, 10, 6]:
        locked.insert_one({"_id": f"k{i:02d}", "o": f"o{(i * 5) % 12:02d}", "group": i % 3,
                           **({"_deleting": True} if i == 5 else {})})

    def same():
        expected = list(plain.find(query, projection, sort=sort, limit=limit, skip=skip))
        assert locked.find(query, projection, sort=sort, limit=limit, skip=skip) == expected

    same()
    locked.delete_one({"_id": "k04"})
    locked.insert_one({"_id": "k035", "o": "o035", "group": 1})
    same()
    locked.update_one({"_id": "k07"}, {"$set": {"o": "o11a"}})  # a write by key moves it
    same()
    locked.update_many({}, {"$set": {"group": 2}})
    same()
    locked.insert_one({"_id": "k99", "group": 1})  # no value: mongomock's order from now on
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


@pytest.mark.parametrize("query", [
    {"_id": "k05"}, {"_id": "k06", "_deleting": True}, {"_id": "zz"}, {"u": "u7"},
    {"u": "u9", "_deleting": {"$exists": False}}, {"u": "nope"}])
@pytest.mark.parametrize("projection", [None, {"_id": 1}, {"_id": 1, "u": 1}])
def test_unsorted_finds_by_key_match_mongomock(query, projection):
    plain, locked = pair()
    assert locked.find(query, projection) == list(plain.find(query, projection))


def test_uncopied_reads_hand_out_the_stored_documents_and_match_mongomock(collections):
    plain, locked = collections
    shown = locked.uncopied
    assert shown.find_one({"_id": "a"}) is locked.uncopied.find_one({"_id": "a"})
    assert shown.find_one({"_id": "b", "organization": "o1"}) == plain.find_one({"_id": "b"})
    page = shown.find({"_id": {"$gt": "a"}}, sort=[("_id", 1)], limit=5)
    assert page == list(plain.find({"_id": {"$gt": "a"}}, sort=[("_id", 1)], limit=5))
    assert page[0] is shown.find_one({"_id": "b"})


def test_the_estimated_count_is_an_estimate_as_mongodbs():
    """It counts a document past its TTL until something removes it, as
    MongoDB's does until its monitor's pass: the start's envelope look must
    not walk every scan to build the expiry heap."""
    from datetime import datetime, timedelta, timezone
    locked = LockedCollection(mongomock_ng.MongoClient().db.expiring)
    locked.create_index([("at", 1)], expireAfterSeconds=60)
    now = datetime.now(timezone.utc)
    locked.insert_many([{"_id": "old", "at": now - timedelta(hours=1)},
                        {"_id": "new", "at": now}])
    assert locked.estimated_document_count() == 2
    assert locked.count_documents({}) == 1  # an exact count expires first
    assert locked.estimated_document_count() == 1
