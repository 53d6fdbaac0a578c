"""What the writes changed (inventory/embedded/tracking.py): every way a
collection's documents dict is changed is noted, and a commit's records are
the documents those keys hold now (or their removal), the index
definitions when they changed, and a drop."""
import gc

import mongomock_ng
import pytest

from inventory.embedded.tracking import Tracked, Tracker, copied


@pytest.mark.parametrize("change, noted", [
    (lambda d: d.__setitem__("new", {"_id": "new"}), ["new"]),
    (lambda d: d.__delitem__("a"), ["a"]),
    (lambda d: d.pop("a"), ["a"]),
    (lambda d: d.pop("absent", None), ["absent"]),
    (lambda d: d.popitem(), ["b"]),
    (lambda d: d.setdefault("c", {"_id": "c"}), ["c"]),
    (lambda d: d.update({"x": {"_id": "x"}}, y={"_id": "y"}), ["x", "y"]),
    (lambda d: d.clear(), ["a", "b"]),
])
def test_every_change_to_the_documents_is_noted_in_order(change, noted):
    documents = Tracked({"a": {"_id": "a"}, "b": {"_id": "b"}})
    assert documents.dirty == {}  # what it starts with is not a change
    change(documents)
    assert list(documents.dirty) == noted


def test_a_commits_records_are_what_the_keys_hold_now():
    raw = mongomock_ng.MongoClient()["inventory"]
    tracker = Tracker()
    tracker.track("things", raw.things)
    assert tracker.changes() == ([], [])
    raw.things.insert_one({"_id": "a", "v": 1})
    raw.things.insert_one({"_id": "b", "v": 2})
    raw.things.update_one({"_id": "a"}, {"$set": {"v": 3}})
    raw.things.delete_one({"_id": "b"})
    raw.things.create_index([("v", 1)])
    records, written = tracker.changes("things")
    assert records[0]["c"] == "things" and "v_1" in records[0]["indexes"]
    assert records[1:] == [{"c": "things", "put": {"_id": "a", "v": 3}},
                           {"c": "things", "del": "b"}]
    assert not gc.is_tracked(records[1]["put"])  # committed documents leave the collector
    assert tracker.changes("things")[0] == records[1:]  # noted until committed (indexes once)
    tracker.committed(written)
    assert tracker.changes() == ([], [])


def test_a_dropped_collection_is_a_drop_and_its_documents_after():
    raw = mongomock_ng.MongoClient()["inventory"]
    tracker = Tracker()
    raw.gone.insert_one({"_id": 1})
    tracker.track("gone", raw.gone)
    raw.gone.drop()
    raw.gone.insert_one({"_id": 2})
    records, written = tracker.changes()
    assert records[0] == {"c": "gone", "drop": True}
    assert records[-1] == {"c": "gone", "put": {"_id": 2}}
    tracker.committed(written)
    assert tracker.changes() == ([], [])


def test_index_definitions_are_copied_with_keys_as_lists():
    indexes = {"v_1": {"key": (("v", 1),), "unique": True}}
    recorded = copied(indexes)
    assert recorded == {"v_1": {"key": [("v", 1)], "unique": True}}
    indexes["v_1"]["unique"] = False
    assert recorded["v_1"]["unique"] is True
