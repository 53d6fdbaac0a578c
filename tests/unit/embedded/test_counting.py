"""Counts by fields (inventory/embedded/counting.py): summaries' and a
rollout's status, answered as mongomock answers them, in one pass that
lets others in between its slices."""
import json

import mongomock_ng
import pytest

from inventory.embedded import lock
from inventory.embedded.collection import LockedCollection
from tests.support.mongomock_pairs import N

pytestmark = pytest.mark.usefixtures("a_turn_of_its_own")


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
def test_faceted_counts_match_mongomock_in_one_pass(query, counted_passes):
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
    passes = counted_passes(locked)
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


def test_a_dotted_path_reads_through_objects_only_and_arrays_go_to_mongomock():
    """A dotted path reads through a dict and a dict subclass (SON); a value
    with a `get` of its own that is not an object (a DBRef with a `get`
    field) holds no such path; through an array, mongomock's rules decide
    (it reads each element's)."""
    from bson import DBRef
    from bson.son import SON
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(plain)
    locked.insert_one({"_id": "d", "a": {"b": "x"}})
    locked.insert_one({"_id": "s", "a": SON([("b", "y")])})
    locked.insert_one({"_id": "r", "a": DBRef("c", 1, get=5)})
    locked.insert_one({"_id": "t", "a": "text"})
    pipeline = [{"$match": {}}, {"$group": {"_id": {"k": "$a.b"}, "n": {"$sum": 1}}}]
    assert _canonical_n(locked.aggregate(pipeline)) == _canonical_n(
        [{"_id": {}, "n": 2}, {"_id": {"k": "x"}, "n": 1}, {"_id": {"k": "y"}, "n": 1}])
    locked.insert_one({"_id": "u", "a": [{"b": 1}, {"b": 2}]})
    assert _canonical_n(locked.aggregate(pipeline)) == \
        _canonical_n(plain.aggregate(pipeline))
    assert {"_id": {"k": [1, 2]}, "n": 1} in locked.aggregate(pipeline)


def _canonical_n(rows):
    return sorted(json.dumps(row, sort_keys=True) for row in rows)


def test_a_pipeline_that_writes_a_collection_is_refused():
    """$out and $merge would change another collection's documents behind
    its kept indexes: refused, nothing written."""
    from pymongo.errors import OperationFailure
    client = mongomock_ng.MongoClient()
    source, target = LockedCollection(client.db.source), LockedCollection(client.db.target)
    source.insert_one({"_id": "a"})
    target.insert_one({"_id": "b"})
    for stage in ({"$out": "target"}, {"$merge": {"into": "target"}}):
        with pytest.raises(OperationFailure, match="not supported by the embedded store"):
            source.aggregate([{"$match": {}}, stage])
    assert [d["_id"] for d in target.find({})] == ["b"]


# -- the pass in slices ----------------------------------------------------

SUMMARY = [{"$match": {"group": {"$ne": 99}}},
           {"$group": {"_id": {"g0": "$group"}, "count": {"$sum": 1}}}]


def counts(rows):
    return {row["_id"].get("g0"): row["count"] for row in rows}


def test_a_summary_pass_lets_others_in_and_counts_what_each_slice_reads(
        between_slices, things, raw_things, monkeypatch):
    """Sliced like a long walk: a record deleted before its slice is read is
    not counted, one inserted after the pass began is not either, and the
    rest are counted once."""
    monkeypatch.setattr(lock, "SLICE_SECONDS", -1.0)
    monkeypatch.setattr(lock, "SLICE_DOCUMENTS", 10)
    last_key = [d["_id"] for d in raw_things.find({}, {"_id": 1})][-1]  # insertion order

    def write(call):
        if call == 1:
            things.delete_one({"_id": last_key})  # in the last slice: not read yet
            things.insert_one({"_id": "new", "name": "new", "group": 0})
    calls = between_slices(write)
    found = counts(things.aggregate(SUMMARY))
    assert len(calls) >= N // 10 - 1
    assert sum(found.values()) == N - 1
    group = int(last_key[1:]) % 3
    assert found[group] == sum(1 for i in range(N) if i % 3 == group) - 1


def test_a_summary_under_an_outer_hold_of_the_lock_never_lets_go(
        between_slices, things, monkeypatch):
    monkeypatch.setattr(lock, "TURN_SECONDS", 60.0)  # as above: slices, not turns
    monkeypatch.setattr(lock, "SLICE_SECONDS", -1.0)
    monkeypatch.setattr(lock, "SLICE_DOCUMENTS", 10)
    calls = between_slices(lambda call: None)
    with lock.LOCK:
        found = counts(things.aggregate(SUMMARY))
    assert calls == [] and sum(found.values()) == N
