"""The embedded collection's writes by key (inventory/embedded/writes.py):
the same answers and the same documents as mongomock's, and no pass over
the other documents."""

from collections import OrderedDict
from datetime import datetime, timedelta, timezone

import mongomock_ng
import pytest
from bson import Timestamp
from pymongo.errors import DuplicateKeyError

from inventory.embedded import mongomock_internals
from inventory.embedded.collection import LockedCollection
from tests.conftest import REAL_MONGO
from tests.support.mongomock_pairs import outcome, pair

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


def test_a_write_by_key_reads_no_other_document(scans_refused):
    """Flat at any size: the keyed paths never reach mongomock's scans."""
    raw = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(raw)
    locked.create_index("code", unique=True)
    for i in range(50):
        locked.insert_one({"_id": f"k{i:02d}", "code": f"c{i}", "n": 0})
    scans_refused(raw)
    locked.update_one({"_id": "k07"}, {"$set": {"n": 1}})
    locked.find_one_and_update({"_id": "k08"}, {"$set": {"n": 2}})
    locked.update_many({"_id": "k09", "n": 0}, {"$set": {"n": 3}})
    locked.delete_one({"_id": "k10"})
    assert [d["n"] for d in locked.find({"_id": {"$gte": "k07"}}, sort=[("_id", 1)],
                                        limit=3)] == [1, 2, 3]


@pytest.mark.parametrize("document", [
    {"_id": "new", "u": "fresh"}, {"_id": "k03", "u": "fresh"}, {"_id": "new", "u": "u4"},
    {"_id": "new"}, {"_id": "new", "u": 5}])
def test_inserts_check_unique_keys_as_mongomock_does(document):
    plain, locked = pair()
    assert outcome(lambda: locked.insert_one(dict(document)).inserted_id) == \
        outcome(lambda: plain.insert_one(dict(document)).inserted_id)
    assert list(locked.find({}, sort=[("_id", 1)], limit=100)) == \
        list(plain.find({}, sort=[("_id", 1)]))
    assert locked.find_one({"u": document.get("u")}) == plain.find_one({"u": document.get("u")})


def test_a_deleted_documents_unique_key_can_be_taken_again():
    plain, locked = pair()
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
    plain, locked = pair()
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
    plain, locked = pair()
    assert outcome(lambda: locked.update_one({"_id": "k07"}, update).modified_count) == \
        outcome(lambda: plain.update_one({"_id": "k07"}, update).modified_count)
    assert locked.find_one({"_id": "k07"}) == plain.find_one({"_id": "k07"})


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's own queries (make_config's "
                    "app is on MONGODB_URI's server when it is set)")
@pytest.mark.parametrize("what", ["organization", "platform"])
def test_a_forced_delete_reads_only_what_it_deletes(what, raw_collection):
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
        raw = raw_collection(resource.collection)
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
    raw = mongomock_ng.MongoClient().db.things
    collection = LockedCollection(raw)
    collection.insert_one({"_id": "a", "v": "x", "t": 1})
    assert collection.create_index([("v", 1)], unique=True) == "v_1"
    asked = []
    original = raw.create_index

    def create_index(*args, **kwargs):  # what reaches mongomock's own
        asked.append("create_index")
        return original(*args, **kwargs)
    monkeypatch.setattr(raw, "create_index", create_index)
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
    assert outcome(lambda: locked.update_many(query, update).modified_count) == \
        outcome(lambda: expected.update_many(query, update).modified_count)
    assert locked.find({}, sort=[("_id", 1)], limit=10) == list(expected.find({}, sort=[("_id", 1)]))


@pytest.mark.parametrize("document", [
    {"_id": "a", "at": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2))),
     "naive": datetime(2026, 1, 2, 3, 4, 5, 999999), "n": 1, "f": 1.5, "b": True, "none": None},
    {"_id": "b", "nested": {"deep": [{"at": datetime(2026, 5, 1, tzinfo=timezone.utc)}, (1, 2)]},
     "ordered": OrderedDict([("z", 1), ("a", 2)]), "t": (3, [4])},
    {"_id": "c", "when": Timestamp(0, 0), "ts": Timestamp(5, 1), "list": [[], {}, "s"]},
])
def test_an_insert_by_key_stores_what_mongomock_stores_and_as_a_copy(document):
    """The stored document is mongomock's stored form (times naive UTC to
    the millisecond, tuples as lists), and shares no object or array with
    the caller's: a read handed it out uncopied stays as it was."""
    raw = mongomock_ng.MongoClient().db.things
    plain = mongomock_ng.MongoClient().db.things
    LockedCollection(raw).insert_one(document)
    plain.insert_one(dict(document))
    stored, expected = (mongomock_internals.documents(mongomock_internals.collection_store(c))
                        [document["_id"]] for c in (raw, plain))
    stored, expected = dict(stored), dict(expected)
    if "when" in document:  # a new timestamp each time: compare the rest
        assert isinstance(stored.pop("when"), Timestamp)
        expected.pop("when")
    assert stored == expected
    assert [type(v) for v in stored.values()] == [type(v) for v in expected.values()]
    for key, value in document.items():  # no object or array is shared
        if isinstance(value, (dict, list)):
            assert stored[key] is not value
