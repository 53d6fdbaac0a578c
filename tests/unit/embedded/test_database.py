"""The embedded store's keyed reads answer exactly what mongomock would."""
import json
from collections import OrderedDict
from datetime import datetime, timedelta, timezone

import mongomock_ng
import pytest
from bson import Timestamp
from pymongo.errors import DuplicateKeyError

from inventory.embedded.database import LockedCollection
from tests.conftest import REAL_MONGO

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


ORDER_QUERIES = [
    {}, {"_deleting": {"$exists": False}}, {"o": {"$gt": "o05"}}, {"o": {"$lt": "o05"}},
    {"o": {"$gte": "o03", "$lte": "o09"}}, {"o": {"$gt": "o03", "$lt": "o09"}, "group": 1},
    {"o": {"$lt": "o08"}, "_id": {"$gt": "k02"}}, {"o": {"$gt": 5}}, {"o": {"$gt": "zz"}},
    {"$or": [{"group": 1}, {"o": "o00"}]},
]


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


# -- writes by key: the same answers and the same documents as mongomock's --

WRITES = [
    ("update_one", {"_id": "k03"}, {"$set": {"group": 9, "tags.a": "x"}}),
    ("update_one", {"_id": "k03", "group": 9}, {"$set": {"tags.b": "y"}, "$unset": {"tags.a": ""}}),
    ("update_one", {"_id": "k04", "group": 99}, {"$set": {"group": 1}}),  # no match
    ("update_one", {"_id": "nope"}, {"$set": {"group": 1}}),
    ("update_one", {"_id": "k05"}, {"$set": {"group": 2}}),  # unchanged value
    ("update_one", {"_id": "k06"}, {"$unset": {"missing.deep": ""}}),
    ("update_one", {"_id": "k07", "_deleting": {"$exists": False}},
     {"$set": {"_deleting": True}}),
    ("update_many", {"_id": "k07", "_deleting": {"$exists": False}},
     {"$set": {"_deleting": True}}),  # marked already: no match
    ("update_many", {"_id": "k08"}, {"$set": {"code": "c8-new"}}),  # a unique field
    ("find_one_and_update", {"_id": "k09"}, {"$set": {"group": 5}}),
    ("find_one_and_update_after", {"_id": "k10"}, {"$set": {"plain": "p"}}),
    ("find_one_and_update", {"_id": "k10", "group": 123}, {"$set": {"plain": "q"}}),
    ("delete_one", {"_id": "k02"}, None),
    ("delete_one", {"_id": "k02"}, None),  # gone already
    ("delete_one", {"_id": "k11", "group": 123}, None),  # no match
    ("insert_one", {"_id": "k035", "code": "c35", "group": 2, "plain": "p1"}, None),
    ("insert_one", {"_id": "k00", "code": "c0", "group": 0, "plain": "p1"}, None),
]


def _apply(collection, write):
    from pymongo import ReturnDocument

    name, filter_, update = write
    if name == "insert_one":
        return collection.insert_one(dict(filter_)).inserted_id
    if name == "delete_one":
        return collection.delete_one(filter_).deleted_count
    if name.startswith("find_one_and_update"):
        after = name.endswith("_after")
        return collection.find_one_and_update(
            filter_, update, return_document=ReturnDocument.AFTER if after
            else ReturnDocument.BEFORE)
    result = getattr(collection, name)(filter_, update)
    return result.matched_count, result.modified_count


def test_writes_by_key_match_mongomock_and_keep_reads_right():
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(mongomock_ng.MongoClient().db.things)
    for collection in (plain, locked):
        collection.create_index("code", unique=True)
        collection.create_index("plain")
        for i in range(1, 12):
            collection.insert_one({"_id": f"k{i:02d}", "code": f"c{i}", "group": i % 3,
                                   "plain": f"p{i % 4}", "tags": {}})
    # warm the keyed reads' caches, so that the writes must keep them right
    assert locked.find({}, sort=[("_id", 1)], limit=50) == list(
        plain.find({}, sort=[("_id", 1)], limit=50))
    locked.find_one({"plain": "p1"})
    for write in WRITES:
        assert _apply(locked, write) == _apply(plain, write), write
        assert list(locked.find({}, sort=[("_id", 1)], limit=50)) == list(
            plain.find({}, sort=[("_id", 1)], limit=50)), write
        for value in ("p0", "p1", "p", "c8-new"):
            assert locked.find_one({"plain": value}) == plain.find_one({"plain": value}), write
        assert locked.find_one({"code": "c8-new"}) == plain.find_one({"code": "c8-new"})


def test_a_write_by_key_that_would_break_a_unique_index_is_refused_like_mongomock():
    from pymongo.errors import DuplicateKeyError

    locked = LockedCollection(mongomock_ng.MongoClient().db.things)
    locked.create_index("code", unique=True)
    locked.insert_one({"_id": "a", "code": "x"})
    locked.insert_one({"_id": "b", "code": "y"})
    with pytest.raises(DuplicateKeyError):
        locked.update_one({"_id": "b"}, {"$set": {"code": "x"}})
    assert locked.find_one({"_id": "b"})["code"] == "y"


def test_a_write_by_key_reads_no_other_document(monkeypatch):
    """Flat at any size: the keyed paths never reach mongomock's scans."""
    locked = LockedCollection(mongomock_ng.MongoClient().db.things)
    locked.create_index("code", unique=True)
    for i in range(50):
        locked.insert_one({"_id": f"k{i:02d}", "code": f"c{i}", "n": 0})

    def scanned(*_args, **_kwargs):
        raise AssertionError("a keyed write scanned the collection")
    monkeypatch.setattr(locked._collection, "_iter_documents", scanned)
    monkeypatch.setattr(locked._collection, "_ensure_uniques", scanned)
    locked.update_one({"_id": "k07"}, {"$set": {"n": 1}})
    locked.find_one_and_update({"_id": "k08"}, {"$set": {"n": 2}})
    locked.update_many({"_id": "k09", "n": 0}, {"$set": {"n": 3}})
    locked.delete_one({"_id": "k10"})
    assert [d["n"] for d in locked.find({"_id": {"$gte": "k07"}}, sort=[("_id", 1)],
                                        limit=3)] == [1, 2, 3]


MATCHED_DOCS = [
    {"_id": "a"}, {"_id": "b", "team": "x"}, {"_id": "c", "team": "y"},
    {"_id": "d", "team": ["x", "z"]}, {"_id": "e", "team": []}, {"_id": "f", "team": None},
    {"_id": "g", "team": 1}, {"_id": "h", "team": {"x": 1}}, {"_id": "i", "team": [["x"]]},
    {"_id": "j", "team": "x", "_deleting": True}, {"_id": "k", "team": "x", "_deleting": None},
    {"_id": "l", "team": 2.5}, {"_id": "m", "team": float("nan")}, {"_id": "n", "team": True},
    {"_id": "o", "team": [1, 3]}, {"_id": "p", "team": -7}, {"_id": "q", "team": [None]},
    {"_id": "r", "team": [{"k": "a", "n": 1}, {"k": "b", "n": 2}]},
    {"_id": "s", "team": [{"n": 1, "k": "a"}, {"k": "b", "n": 2}]}, {"_id": "t", "team": [1.0, 3]},
    {"_id": "u", "team": [[1, 3], 4]}, {"_id": "v", "team": [True, 3]},
    # outboxes of whole records (compared in C where their form is plain JSON)
    {"_id": "w", "team": [{"k": "a", "at": datetime(2026, 1, 1), "o": {"v": [1, 2.5, "x"]}}]},
    {"_id": "x", "team": [None, {"n": float("nan")}]}, {"_id": "y", "team": [{"n": 2**70}]},
    {"_id": "z", "team": [{"a": True}, {"b": 1}]}, {"_id": "za", "team": [{"o": {"v": [1, 2]}}]},
]
MATCHED_QUERIES = [
    {}, {"team": "x"}, {"team": ""}, {"team": {"$exists": True}}, {"team": {"$exists": False}},
    {"team": "x", "_deleting": {"$exists": False}}, {"_id": "b", "team": "x"},
    {"_id": {"$gt": "b"}, "team": "x"}, {"_id": {"$gt": "b", "$gte": "c"}},
    {"_id": {"$gt": 1}}, {"team": {"$exists": 1}}, {"team.x": 1}, {"team": {"$ne": "x"}},
    {"team": 1}, {"$or": [{"team": "x"}]},
    {"team": {"$eq": "x"}}, {"team": {"$lt": "y"}}, {"team": {"$gte": "x", "$lt": "y"}},
    {"team": {"$gt": ""}}, {"team": {"$lte": "x"}, "_deleting": {"$exists": False}},
    {"$and": [{"team": {"$gte": "x"}}, {"team": {"$lt": "y"}}]},
    {"$and": [{"_id": {"$gt": "b"}}, {"_id": {"$lt": "h"}}], "team": "x"},
    {"$and": [{"team": "x"}, {"$or": [{"_id": "b"}]}]},
    {"team": {"$lt": "y", "$ne": "x"}}, {"team": {"$in": ["x"]}},
    # numbers and null, as a scan's time is raised (`last_scanned_on`)
    {"team": None}, {"team": {"$lt": 2}}, {"team": {"$gte": 1, "$lt": 2.5}},
    {"team": {"$gt": -10.5}}, {"team": {"$eq": 1}}, {"team": {"$lte": 2.5}},
    {"$or": [{"team": None}, {"team": {"$lt": 5}}]}, {"team": {"$lt": float("nan")}},
    {"team": {"$gt": True}}, {"team": {"$gt": 0}, "_deleting": {"$exists": False}},
    # an array read back, as the outbox is cleared
    {"team": [{"k": "a", "n": 1}, {"k": "b", "n": 2}]}, {"_id": "r", "team": [{"k": "a", "n": 1}]},
    {"team": [1, 3]}, {"team": [1.0, 3]}, {"team": []}, {"team": ["x", "z"]}, {"team": [["x"]]},
    {"team": [None]}, {"_id": {"$gt": "a"}, "team": [1, 3], "_deleting": {"$exists": False}},
    {"$or": [{"team": [1, 3]}, {"team": "x"}]},
    {"team": [{"k": "a", "at": datetime(2026, 1, 1), "o": {"v": [1, 2.5, "x"]}}]},
    {"team": [{"k": "a", "at": datetime(2026, 1, 2), "o": {"v": [1, 2.5, "x"]}}]},
    {"team": [None, {"n": None}]}, {"team": [None, {"n": float("nan")}]},
    {"team": [{"n": 2**70}]}, {"team": [{"n": 2**70 + 1}]}, {"team": [{"a": 1}, {"b": True}]},
    {"team": [{"a": True}, {"b": 1}]}, {"team": [{"o": {"v": [1, 2]}}]},
    {"team": [{"o": {"v": [1.0, 2]}}]}, {"team": [{"o": {"v": [2, 1]}}]},
]


@pytest.mark.parametrize("walked", [False, True])
@pytest.mark.parametrize("query", MATCHED_QUERIES)
def test_the_direct_matcher_agrees_with_mongomock(query, walked):
    """Every document against every query; on a walk, `_id` bounds are the
    walk's own, so only documents inside them are asked about."""
    from mongomock_ng.filtering import filter_applies

    from inventory.embedded.database import _bounds, _matcher
    lower, lower_inclusive, upper, upper_inclusive = _bounds(query)
    matches = _matcher(query, walked="_id" if walked else None)
    for document in MATCHED_DOCS:
        if walked and lower is not None and not (
                document["_id"] >= lower if lower_inclusive else document["_id"] > lower):
            continue
        assert matches(document) == filter_applies(query, document), document


# -- counts by fields (summaries) ---------------------------------------------

COUNT_DOCS = [
    {"_id": f"k{i:02d}", "organization": f"o{i % 3}", "environment": ["prod", "dev"][i % 2],
     "_version_key": f"0001.00{20 + i % 5}.000001", "_distribution": ["eks", "upstream"][i % 2],
     **({"labels": {"team": ["a", "b"][i % 2]}} if i % 4 else {"labels": {}}),
     **({"_deleting": True} if i == 7 else {}), **({"note": None} if i == 3 else {})}
    for i in range(24)]
COUNT_QUERIES = [
    {}, {"_deleting": {"$exists": False}}, {"organization": "o1", "_deleting": {"$exists": False}},
    {"$or": [{"_distribution": {"$eq": "eks"}, "_version_key": {"$gte": "0001.0022.000000",
                                                                 "$lt": "0001.0024.000000"}},
             {"_distribution": {"$eq": "upstream"}}]},
    {"$nor": [{"environment": "prod"}]}, {"labels.team": "a"}, {"_id": {"$exists": False}},
]
COUNT_KEYS = [{"g0": "$environment"}, {"g0": "$organization", "g1": "$_version_key"},
              {"g0": "$labels.team", "g1": "$note", "g2": "$_distribution"},
              {"g0": "$missing.deep"}]


def _canonical(rows):
    return sorted((sorted(row["_id"].items()), row["count"]) for row in rows)


@pytest.mark.parametrize("query", COUNT_QUERIES)
@pytest.mark.parametrize("keys", COUNT_KEYS)
def test_counts_by_fields_match_mongomock_through_writes(query, keys):
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(plain)
    for doc in COUNT_DOCS:
        locked.insert_one(dict(doc))
    pipeline = [{"$match": query}, {"$group": {"_id": keys, "count": {"$sum": 1}}}]

    def same():
        assert _canonical(locked.aggregate(pipeline)) == _canonical(plain.aggregate(pipeline))

    same()
    locked.update_one({"_id": "k05"}, {"$set": {"environment": "test", "labels.team": "c"}})
    locked.delete_one({"_id": "k06"})
    locked.insert_one({"_id": "k99", "organization": "o1", "environment": "prod"})
    same()


@pytest.mark.parametrize("query", COUNT_QUERIES[:3])
def test_faceted_counts_match_mongomock_in_one_pass(query):
    """A rollout's status: a $match, then a $facet of counts by fields
    (each stage's query, and none of the earlier ones'), answered as
    mongomock answers it, reading each document once."""
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(plain)
    for doc in COUNT_DOCS:
        locked.insert_one(dict(doc))
    first, second = {"labels.team": "a"}, {"environment": "prod"}
    group = {"$group": {"_id": {"v": "$_version_key", "e": "$environment"}, "n": {"$sum": 1}}}
    pipeline = [{"$match": query}, {"$facet": {
        "s0": [{"$match": first}, group],
        "s1": [{"$match": {**second, "$nor": [first]}}, group],
        "u": [{"$match": {"$nor": [first, second]}}, group],
        "all": [{"$match": {}}, group]}}]
    passes = []
    original = locked._document_slices

    def counted():
        passes.append(1)
        return original()
    locked._document_slices = counted
    (found,) = locked.aggregate(pipeline)
    (expected,) = plain.aggregate(pipeline)
    assert passes == [1]
    assert found.keys() == expected.keys()
    for name in found:
        assert sorted(json.dumps(row, sort_keys=True) for row in found[name]) == \
            sorted(json.dumps(row, sort_keys=True) for row in expected[name]), name


def test_counts_by_fields_group_arrays_of_scalars_as_mongomock_does():
    """Arrays group as equal arrays (`:blockers` counts by a list of keys)."""
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(plain)
    for doc in COUNT_DOCS[:6]:
        locked.insert_one(dict(doc))
    for key, value in (("a1", ["prod", "dev"]), ("a2", ["prod", "dev"]), ("a3", ["dev", "prod"]),
                       ("a4", []), ("a5", ["prod"])):
        locked.insert_one({"_id": key, "environment": value})
    pipeline = [{"$match": {}}, {"$group": {"_id": {"g0": "$environment"},
                                            "count": {"$sum": 1}}}]
    answer = locked.aggregate(pipeline)
    def rows(found):
        return sorted(json.dumps(row, sort_keys=True) for row in found)
    assert rows(answer) == rows(plain.aggregate(pipeline))
    assert {"_id": {"g0": ["prod", "dev"]}, "count": 2} in answer


def test_counts_by_fields_leave_objects_and_other_pipelines_to_mongomock():
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(plain)
    for doc in COUNT_DOCS[:6]:
        locked.insert_one(dict(doc))
    locked.insert_one({"_id": "arr", "environment": [{"a": 1}], "labels": {"team": "a"}})
    for pipeline in (
            [{"$match": {}}, {"$group": {"_id": {"g0": "$environment"}, "count": {"$sum": 1}}}],
            [{"$match": {}}, {"$group": {"_id": {"g0": "$labels"}, "count": {"$sum": 1}}}],
            [{"$match": {}}, {"$group": {"_id": "$environment", "count": {"$sum": 1}}}],
            [{"$match": {}}, {"$group": {"_id": {"g0": "$environment"}, "n": {"$sum": 2}}}],
            [{"$match": {}}, {"$sort": {"_id": 1}}]):
        assert locked.aggregate(pipeline) == list(plain.aggregate(pipeline)), pipeline


# -- the matcher: OR and NOT trees of plain conditions -----------------------

MATCH_DOCS = [
    {"_id": "a", "e": "prod", "d": "eks", "v": "0001.0029.000001"},
    {"_id": "b", "e": "dev", "d": "gke", "v": "0001.0031.000000", "x": None},
    {"_id": "c", "e": ["prod", "dev"], "d": "eks", "v": "0001.0036.000002"},
    {"_id": "d", "d": "aks", "v": 5, "_deleting": True},
    {"_id": "e", "e": "staging", "d": {"nested": "eks"}, "v": "0001.0018.000000"},
    {"_id": "f", "e": "prod"},
]
TREE_QUERIES = [
    {"$or": [{"d": {"$eq": "eks"}, "v": {"$gte": "0001.0030.000000", "$lt": "0001.0037.000000"}},
             {"d": {"$eq": "gke"}}]},
    {"$nor": [{"e": "prod"}]},
    {"$nor": [{"$or": [{"e": "dev"}, {"d": {"$eq": "aks"}}]}], "_deleting": {"$exists": False}},
    {"$and": [{"$or": [{"v": {"$lt": "0001.0030.000000"}}, {"x": {"$exists": True}}]},
              {"$nor": [{"d": "gke"}]}]},
    {"$or": [{"e": {"$gte": "p", "$lt": "q"}}, {"v": {"$gt": "0001.0035.000000"}}]},
    {"$or": [{"d": {"$eq": "eks"}}, {"labels.team": "a"}]},  # a dotted path through objects
    {"d.nested": "eks"}, {"d.nested": {"$exists": True}}, {"d.nested": {"$exists": False}},
    {"d.nested": None}, {"e.x": "prod"}, {"e.0": "prod"}, {"v.x": {"$lt": 9}},
    {"$nor": [{"d.nested": {"$gte": "e"}}]}, {"d.nested.deeper": {"$exists": False}},
    {"$or": [{"e": {"$ne": "prod"}}]},  # $ne: mongomock
    {"$nor": [{"v": {"$gte": "0001.0019.000000", "$lt": "0001.0037.000000"}}]},
]


@pytest.mark.parametrize("query", TREE_QUERIES)
def test_or_and_not_trees_match_as_mongomock_does(query):
    from mongomock_ng.filtering import filter_applies

    from inventory.embedded.database import _matcher
    matches = _matcher(query)
    for document in MATCH_DOCS:
        assert matches(document) == filter_applies(query, document), (query, document)


# -- unique checks, deletes by key, $inc and expiry: mongomock's own answers --

def _pair():
    """Two collections with the same documents and a unique index on `u`:
    mongomock alone, and the embedded store's wrapper over another."""
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(mongomock_ng.MongoClient().db.things)
    for collection in (plain, locked):
        collection.create_index([("u", 1)], unique=True)
        for i in range(20):
            collection.insert_one({"_id": f"k{i:02d}", "u": f"u{i}", "x": i,
                                   **({"_deleting": True} if i % 3 == 0 else {})})
    return plain, locked


def _outcome(call):
    try:
        result = call()
    except Exception as error:  # the same error, or the same answer
        return type(error).__name__
    return getattr(result, "raw_result", result)


@pytest.mark.parametrize("document", [
    {"_id": "new", "u": "fresh"}, {"_id": "k03", "u": "fresh"}, {"_id": "new", "u": "u4"},
    {"_id": "new"}, {"_id": "new", "u": 5}])
def test_inserts_check_unique_keys_as_mongomock_does(document):
    plain, locked = _pair()
    assert _outcome(lambda: locked.insert_one(dict(document)).inserted_id) == \
        _outcome(lambda: plain.insert_one(dict(document)).inserted_id)
    assert list(locked.find({}, sort=[("_id", 1)], limit=100)) == \
        list(plain.find({}, sort=[("_id", 1)]))
    assert locked.find_one({"u": document.get("u")}) == plain.find_one({"u": document.get("u")})


def test_a_deleted_documents_unique_key_can_be_taken_again():
    plain, locked = _pair()
    for collection in (plain, locked):
        collection.delete_one({"_id": "k04"})
        collection.insert_one({"_id": "again", "u": "u4"})
    assert locked.find_one({"u": "u4"}) == plain.find_one({"u": "u4"}) == {
        "_id": "again", "u": "u4"}


@pytest.mark.parametrize("query", [
    {"_id": "k05"}, {"_id": "k05", "_deleting": True}, {"_id": {"$in": ["k01", "k03", "zz"]}},
    {"_id": {"$in": ["k03", "k06"]}, "_deleting": True}, {"_id": {"$gt": "k04", "$lt": "k09"}},
    {"_id": {"$gte": "k04", "$lte": "k09"}, "_deleting": True},
    {"_id": {"$gt": "k18", "$lt": "k99"}}, {"x": {"$lt": 4}}])
@pytest.mark.parametrize("method", ["delete_one", "delete_many"])
def test_deletes_by_key_match_mongomock(query, method):
    plain, locked = _pair()
    assert getattr(locked, method)(query).deleted_count == \
        getattr(plain, method)(query).deleted_count
    assert list(locked.find({}, sort=[("_id", 1)], limit=100)) == \
        list(plain.find({}, sort=[("_id", 1)]))
    for i in range(20):  # the lookups forgot the deleted documents
        assert locked.find_one({"u": f"u{i}"}) == plain.find_one({"u": f"u{i}"})


@pytest.mark.parametrize("update", [
    {"$inc": {"x": 2}}, {"$inc": {"count.clusters": 1}, "$set": {"r.k": 1}},
    {"$inc": {"x": -1}, "$unset": {"nope": ""}}, {"$inc": {"x": 1.5}}, {"$inc": {"u": 1}}])
def test_inc_by_key_matches_mongomock(update):
    plain, locked = _pair()
    assert _outcome(lambda: locked.update_one({"_id": "k07"}, update).modified_count) == \
        _outcome(lambda: plain.update_one({"_id": "k07"}, update).modified_count)
    assert locked.find_one({"_id": "k07"}) == plain.find_one({"_id": "k07"})


def test_expiry_walks_from_the_soonest_and_answers_as_mongomock():
    from datetime import datetime, timedelta, timezone
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    plain = mongomock_ng.MongoClient().db.keys
    locked = LockedCollection(mongomock_ng.MongoClient().db.keys)
    for collection in (plain, locked):
        collection.create_index([("at", 1)], expireAfterSeconds=60)
        for i in range(30):  # every third is over a minute old
            collection.insert_one({"_id": f"k{i:02d}",
                                   "at": now - timedelta(seconds=90 if i % 3 == 0 else 10)})
        collection.insert_one({"_id": "no-time", "at": "not a date"})
    assert locked.index_information() == plain.index_information()
    assert locked.find_one({"_id": "k03"}) is None and locked.find_one({"_id": "k04"})
    assert list(locked.find({}, sort=[("_id", 1)], limit=100)) == \
        list(plain.find({}, sort=[("_id", 1)]))
    assert locked._collection._store._ttl_indexes == {}  # mongomock no longer sweeps
    # a document changed meanwhile expires at its new time, not its old one
    locked.update_one({"_id": "k04"}, {"$set": {"at": now - timedelta(seconds=120)}})
    assert locked.find_one({"_id": "k04"}) is None


@pytest.mark.parametrize("query", [
    {"_id": "k05"}, {"_id": "k06", "_deleting": True}, {"_id": "zz"}, {"u": "u7"},
    {"u": "u9", "_deleting": {"$exists": False}}, {"u": "nope"}])
@pytest.mark.parametrize("projection", [None, {"_id": 1}, {"_id": 1, "u": 1}])
def test_unsorted_finds_by_key_match_mongomock(query, projection):
    plain, locked = _pair()
    assert locked.find(query, projection) == list(plain.find(query, projection))


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's own queries (make_config's "
                    "app is on MONGODB_URI's server when it is set)")
@pytest.mark.parametrize("what", ["organization", "platform"])
def test_a_forced_delete_reads_only_what_it_deletes(what):
    """A cascade's `{parent: {"$in": [...]}}` queries are served by the
    parent's index, not handed to mongomock (a pass over every record): its
    cost does not grow with the unrelated records."""
    from app import create_app
    from tests.conftest import make_config

    app = create_app(make_config())
    store = app.extensions["inventory.store"]
    orgs = [store.organizations.create({"title": f"o{i}", "description": ""}, "t")["id"]
            for i in range(3)]
    for i in range(300):  # unrelated records, and a few of the deleted parent's
        store.platforms.create({"name": f"p{i}", "organization": orgs[i % 3],
                                "control_plane": {"provider": "eks"},
                                "infrastructure": {"cloud": {"provider": "aws"}}}, "t")
        store.clusters.create({"name": f"c{i}", "platform": f"p{i}", "environment": "dev",
                               "version": "1.30.0", "labels": {}}, "t")
    handed = []
    for resource in (store.platforms, store.clusters, store.scans, store.tokens,
                     store.webhooks):
        raw = resource.collection._collection
        for name in ("find", "find_one", "update_many", "update_one", "delete_many",
                     "count_documents"):
            original = getattr(raw, name)

            def recording(*args, _name=name, _original=original, _collection=raw.name, **kwargs):
                handed.append((_collection, _name, args[:1]))
                return _original(*args, **kwargs)
            setattr(raw, name, recording)
    if what == "organization":
        store.organizations.delete(orgs[0], force=True)
    else:
        store.platforms.delete("p7", force=True)
    calls = list(handed)
    assert calls == [], calls  # nothing went to mongomock's passes over the collections
    if what == "organization":
        assert store.clusters.collection.count_documents({"organization": orgs[0]}) == 0
        assert store.clusters.collection.count_documents({}) == 200
    else:
        assert store.clusters.collection.find_one({"_id": "c7"}) is None
        assert store.clusters.collection.count_documents({}) == 299


def test_an_index_that_exists_as_asked_is_left_alone(monkeypatch):
    """As on MongoDB, creating an index that exists with the same keys and
    options is a no-op (mongomock would check every document again: a pass
    at each start); one with other options still goes to mongomock."""
    collection = LockedCollection(mongomock_ng.MongoClient().db.things)
    collection.insert_one({"_id": "a", "v": "x", "t": 1})
    assert collection.create_index([("v", 1)], unique=True) == "v_1"
    asked = []
    original = collection._locked

    def locked(name):
        asked.append(name)
        return original(name)
    monkeypatch.setattr(collection, "_locked", locked)
    assert collection.create_index([("v", 1)], unique=True) == "v_1"
    assert collection.create_index([("v", 1)], unique=True, name="v_1") == "v_1"
    assert asked == []
    collection.create_index([("t", 1)], sparse=True)
    assert asked == ["create_index"]
    with pytest.raises(DuplicateKeyError):
        collection.insert_one({"_id": "b", "v": "x"})


def test_a_unique_index_made_after_keyed_updates_is_still_enforced_by_them():
    """The fields of unique indexes are kept between writes; making an index
    forgets them, so a keyed update that would duplicate a value is refused."""
    collection = LockedCollection(mongomock_ng.MongoClient().db.things)
    collection.insert_many([{"_id": "a", "v": "x"}, {"_id": "b", "v": "y"}])
    collection.update_one({"_id": "b"}, {"$set": {"v": "z"}})  # no unique index yet
    collection.create_index([("v", 1)], unique=True)
    with pytest.raises(DuplicateKeyError):
        collection.update_one({"_id": "b"}, {"$set": {"v": "x"}})
    assert collection.find_one({"_id": "b"})["v"] == "z"


def test_lookups_by_an_indexed_field_follow_one_then_several_then_no_holders():
    """An indexed field's lookup keeps one holder as itself and several as
    a list: reads by the field see every change of holders."""
    collection = LockedCollection(mongomock_ng.MongoClient().db.things)
    collection.create_index([("parent", 1)])
    collection.insert_one({"_id": "a", "parent": "p"})
    assert [d["_id"] for d in collection.find({"parent": "p"})] == ["a"]
    collection.insert_one({"_id": "b", "parent": "p"})
    collection.insert_one({"_id": "c", "parent": "q"})
    assert sorted(d["_id"] for d in collection.find({"parent": "p"})) == ["a", "b"]
    assert sorted(d["_id"] for d in collection.find({"parent": {"$in": ["p", "q"]}})) == \
        ["a", "b", "c"]
    collection.delete_one({"_id": "a"})
    assert [d["_id"] for d in collection.find({"parent": "p"})] == ["b"]
    collection.delete_one({"_id": "b"})
    assert collection.find({"parent": "p"}) == []
    collection.insert_one({"_id": "d", "parent": "p"})
    assert [d["_id"] for d in collection.find({"parent": "p"})] == ["d"]
    codes = LockedCollection(mongomock_ng.MongoClient().db.codes)
    codes.create_index([("code", 1)], unique=True)
    codes.insert_one({"_id": "e", "code": "x"})
    with pytest.raises(DuplicateKeyError):
        codes.insert_one({"_id": "f", "code": "x"})
    codes.delete_one({"_id": "e"})
    codes.insert_one({"_id": "f", "code": "x"})
    assert [d["_id"] for d in codes.find({"code": "x"})] == ["f"]


def test_uncopied_reads_hand_out_the_stored_documents_and_match_mongomock(collections):
    plain, locked = collections
    shown = locked.uncopied
    assert shown.find_one({"_id": "a"}) is locked.uncopied.find_one({"_id": "a"})
    assert shown.find_one({"_id": "b", "organization": "o1"}) == plain.find_one({"_id": "b"})
    page = shown.find({"_id": {"$gt": "a"}}, sort=[("_id", 1)], limit=5)
    assert page == list(plain.find({"_id": {"$gt": "a"}}, sort=[("_id", 1)], limit=5))
    assert page[0] is shown.find_one({"_id": "b"})


@pytest.mark.parametrize("filter_, update", [
    ({"_id": "a", "$or": [{"x": 1}, {"x": 5}]}, {"$push": {"nested.y": 3}}),  # by key, to mongomock
    ({"x": {"$lt": 2}}, {"$set": {"nested.y": [9]}}),  # by no key
    ({"_id": "a"}, {"$push": {"nested.y": 3}}),  # an operator only mongomock applies
])
@pytest.mark.parametrize("method", ["update_one", "update_many", "find_one_and_update"])
def test_a_document_handed_out_uncopied_stays_as_read_through_mongomocks_writes(
        collections, filter_, update, method):
    _, locked = collections
    handed_out = locked.uncopied.find_one({"_id": "a"})
    getattr(locked, method)(filter_, update)
    assert handed_out["nested"]["y"] == [1, 2]  # mongomock changed a copy, in the store
    assert locked.find_one({"_id": "a"})["nested"]["y"] != [1, 2]


def test_replace_and_bulk_writes_leave_documents_handed_out_as_they_were(collections):
    from pymongo import UpdateOne

    _, locked = collections
    handed_out = locked.uncopied.find_one({"_id": "b"})
    locked.replace_one({"_id": "b"}, {"x": 20})
    assert handed_out == {"_id": "b", "x": 2, "organization": "o1", "_rev": "r1"}
    handed_out = locked.uncopied.find_one({"_id": "a"})
    locked.bulk_write([UpdateOne({"x": 1}, {"$push": {"nested.y": 7}})])
    assert handed_out["nested"]["y"] == [1, 2]
    assert locked.find_one({"_id": "a"})["nested"]["y"] == [1, 2, 7]


@pytest.mark.parametrize("write", [
    lambda c: c.insert_one({"_id": "d", "x": 4}),
    lambda c: c.update_one({"_id": "b"}, {"$set": {"x": 5}}),
    lambda c: c.update_one({"x": 3}, {"$set": {"x": 5}}),  # by no key: mongomock's
    lambda c: c.find_one_and_update({"_id": "b"}, {"$inc": {"x": 1}}),
    lambda c: c.delete_one({"_id": "c"}),
    lambda c: c.delete_many({"x": {"$gt": 1}}),
    lambda c: c.replace_one({"_id": "b"}, {"x": 1}),
])
def test_every_write_counts_in_writes(collections, write):
    _, locked = collections
    before = locked.writes
    locked.find_one({"_id": "b"})
    locked.find({"x": {"$gt": 0}})
    assert locked.writes == before  # reads do not count
    write(locked)
    assert locked.writes > before


def test_an_expiry_counts_in_writes():
    from datetime import datetime, timedelta, timezone

    locked = LockedCollection(mongomock_ng.MongoClient().db.expiring)
    locked.create_index([("at", 1)], expireAfterSeconds=60)
    locked.insert_one({"_id": "old", "at": datetime.now(timezone.utc) - timedelta(hours=1)})
    before = locked.writes
    assert locked.find_one({"_id": "old"}) is None
    assert locked.writes > before


@pytest.mark.parametrize("document", [
    {"_id": "a", "at": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2))),
     "naive": datetime(2026, 1, 2, 3, 4, 5, 999999), "n": 1, "f": 1.5, "b": True, "none": None},
    {"_id": "b", "nested": {"deep": [{"at": datetime(2026, 5, 1, tzinfo=timezone.utc)}, (1, 2)]},
     "ordered": OrderedDict([("z", 1), ("a", 2)]), "t": (3, [4])},
    {"_id": "c", "when": Timestamp(0, 0), "ts": Timestamp(5, 1), "list": [[], {}, "s"]},
])
def test_a_document_is_stored_as_mongomock_stores_it_and_as_a_copy(document):
    from mongomock_ng import helpers

    from inventory.embedded.mongomock_internals import as_stored
    stored = as_stored(document)
    expected = helpers.patch_datetime_awareness_in_document(document)
    if "when" in document:  # a new timestamp each time: compare the rest
        assert isinstance(stored.pop("when"), Timestamp)
        expected.pop("when")
    assert stored == expected
    assert [type(v) for v in stored.values()] == [type(v) for v in expected.values()]
    for key, value in document.items():  # no object or array is shared
        if isinstance(value, (dict, list)):
            assert stored[key] is not value


@pytest.mark.parametrize("write", [
    # mongomock's own writes ($push, upsert, replace), filtered by the indexed
    # field: the documents they may change are copied first (_copy_before_change)
    lambda c: c.update_one({"code": "x"}, {"$set": {"code": "y"}, "$push": {"l": 1}}),
    lambda c: c.update_many({"code": "x"}, {"$set": {"code": "y"}, "$push": {"l": 1}}),
    lambda c: c.replace_one({"code": "x"}, {"code": "y", "l": []}),
    lambda c: c.find_one_and_update({"code": "x"}, {"$set": {"code": "y"}, "$push": {"l": 1}}),
    lambda c: c.update_one({"code": "y"}, {"$set": {"l": [1]}}, upsert=True),
])
def test_lookups_by_an_indexed_field_stay_right_through_mongomocks_writes_filtered_by_it(write):
    plain = mongomock_ng.MongoClient().db.things
    plain.create_index("code")
    locked = LockedCollection(plain)
    locked.insert_one({"_id": "a", "code": "x", "l": []})
    assert locked.find_one({"code": "x"})["_id"] == "a"  # the lookup is made
    write(locked)
    for code in ("x", "y"):
        assert locked.find_one({"code": code}) == plain.find_one({"code": code})
        assert locked.find({"code": code}) == list(plain.find({"code": code}))


@pytest.mark.parametrize("second, update", [
    ({"_id": "b", "n": 1.5}, {"$inc": {"n": 1}}),  # a float: mongomock's rules
    ({"_id": "b", "n": {"deep": 1}}, {"$inc": {"n": 1}}),  # not a number: mongomock's error
    ({"_id": "b", "p": 5}, {"$inc": {"p.q": 1}}),  # a path through a number
])
def test_a_write_by_key_of_several_documents_that_mongomock_finishes_applies_once(second, update):
    plain = mongomock_ng.MongoClient().db.things
    plain.insert_many([{"_id": "a", "n": 1, "p": {"q": 1}}, dict(second)])
    expected = mongomock_ng.MongoClient().db.things
    expected.insert_many([{"_id": "a", "n": 1, "p": {"q": 1}}, dict(second)])
    locked = LockedCollection(plain)
    query = {"_id": {"$in": ["a", "b"]}}
    assert _outcome(lambda: locked.update_many(query, update).modified_count) == \
        _outcome(lambda: expected.update_many(query, update).modified_count)
    assert locked.find({}, sort=[("_id", 1)], limit=10) == list(expected.find({}, sort=[("_id", 1)]))


@pytest.mark.parametrize("write", [
    lambda c: c.update({"_id": "a"}, {"$push": {"nested.y": 3}}),
    lambda c: c.find_and_modify({"_id": "a"}, {"$push": {"nested.y": 3}}),
    lambda c: c.save({"_id": "a", "x": 1, "nested": {"y": [3]}}),
])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_mongomocks_older_writes_leave_documents_handed_out_as_they_were(collections, write):
    _, locked = collections
    handed_out = locked.uncopied.find_one({"_id": "a"})
    write(locked)
    assert handed_out["nested"]["y"] == [1, 2]
    assert locked.find_one({"_id": "a"})["nested"]["y"] != [1, 2]
