"""The processes that write a snapshot (inventory/embedded/snapshot_writers.py):
a merge of the files holds what a start replaying them would hold, in its
order, without a fork; a value BSON refuses still compacts."""
import datetime
import os
import uuid

import pytest

from inventory.embedded.snapshot_writers import merge
from tests.support.journaled import open_database, reopened

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


@pytest.mark.slow
def test_a_compaction_merges_the_files_in_a_process_of_its_own_not_a_fork(tmp_path, monkeypatch,
        contents):
    """The snapshot is what a start replaying the files would hold, in its
    order: over a BSON snapshot and the segment after it, with every kind of
    record (a document put again, deleted, put back; a dict `_id`; a value
    BSON cannot hold; indexes changed; a collection dropped and made again)."""
    def no_fork():
        raise AssertionError("a compaction forked")
    monkeypatch.setattr(os, "fork", no_fork)
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i, "v": str(i)} for i in range(20)])
    db.things.insert_one({"_id": {"a": 1, "b": 2}, "at": datetime.datetime(2020, 1, 1)})
    db.gone.insert_one({"_id": "x"})
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.things.update_one({"_id": 3}, {"$set": {"v": "three"}})
    db.things.delete_one({"_id": 4})
    db.things.insert_one({"_id": 4, "v": "back, last"})
    db.things.delete_one({"_id": {"a": 1, "b": 2}})
    db.things.insert_one({"_id": "big", "n": 2**70})
    db.things.create_index([("v", 1)])
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.gone.drop()
    db.gone.insert_one({"_id": "y"})
    db.things.update_one({"_id": 5}, {"$set": {"v": "in the segment being written"}})
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    assert sorted(os.listdir(tmp_path)) == ["journal-000004.jsonl", "lock", "manifest.json",
                                            "snapshot-000004.bson"]
    before = contents(db)
    db = reopened(db)
    assert contents(db) == before
    assert db.things.find_one({"_id": "big"})["n"] == 2**70
    assert [doc["_id"] for doc in db.gone.find()] == ["y"]
    db.journal.close()


@pytest.mark.parametrize("value", [uuid.UUID("01a21164-a175-7565-9134-552fb9651064"),
                                   "lone \ud800 surrogate"])
def test_a_value_bson_refuses_other_than_by_type_still_compacts(tmp_path, value):
    """A UUID (no representation chosen) or a lone surrogate makes bson
    raise a ValueError, not a BSONError: the record is kept as its JSON line
    and the compaction succeeds (a failing one would be retried forever).
    The snapshot gives back what the journal's lines give back (a UUID
    comes back as its string from either)."""
    db = open_database(tmp_path)
    db.things.insert_one({"_id": "odd", "value": value})
    db.things.insert_one({"_id": "plain", "value": 1})
    db.journal.compact()  # the value as inserted, in memory
    assert db.journal.wait_for_compaction()
    assert any(name.endswith(".bson") for name in os.listdir(tmp_path))
    db = reopened(db)
    from_lines = str(value) if isinstance(value, uuid.UUID) else value
    assert db.things.find_one({"_id": "odd"})["value"] == from_lines
    assert db.things.find_one({"_id": "plain"})["value"] == 1
    db.journal.close()


def test_a_merge_in_process_holds_what_a_replay_of_its_files_holds(tmp_path, contents):
    """`merge` itself (in this process, no parent to watch): the snapshot it
    writes from a snapshot and the segments after it replays to what a
    start from those files gives."""
    db = open_database(tmp_path / "data")
    db.things.insert_many([{"_id": i, "v": i} for i in range(10)])
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.things.delete_one({"_id": 3})
    db.things.update_one({"_id": 4}, {"$set": {"v": "four"}})
    db.things.create_index([("v", 1)])
    before = contents(db)
    db.journal.close()
    data = tmp_path / "data"
    merged = tmp_path / "merged"
    merged.mkdir()
    assert merge(str(data / "snapshot-000002.bson"), [str(data / "journal-000002.jsonl")],
                 str(merged / "snapshot-000003.bson"))
    assert sorted(os.listdir(merged)) == ["snapshot-000003.bson"]  # renamed into place
    assert contents(open_database(merged)) == before
