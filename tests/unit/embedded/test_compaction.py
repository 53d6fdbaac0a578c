"""Compaction (inventory/embedded/compaction.py): writes during and after it
survive a restart; it starts by itself as the journal grows; a merge that
fails, or cannot start, is done again from memory by a fork."""
import os
import sys

import pytest

from tests.support.journaled import open_database, reopened

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


def test_compaction_then_more_writes_then_a_restart_gives_the_same_data(tmp_path, contents):
    db = open_database(tmp_path)
    for i in range(50):
        db.things.insert_one({"_id": i, "v": "x" * 100})
    db.things.delete_many({"_id": {"$lt": 10}})
    db.things.create_index([("v", 1)])
    db.journal.compact()
    db.things.update_one({"_id": 20}, {"$set": {"v": "during"}})  # while the child writes
    assert db.journal.wait_for_compaction()
    db.things.insert_one({"_id": 100, "v": "after"})
    db.things.delete_one({"_id": 11})
    assert sorted(os.listdir(tmp_path)) == ["journal-000002.jsonl", "lock", "manifest.json",
                                            "snapshot-000002.bson"]
    before = contents(db)
    db = reopened(db)
    assert contents(db) == before
    assert dict(contents(db)["things"][0])[20]["v"] == "during"


def test_compaction_starts_by_itself_as_the_journal_grows(tmp_path, contents):
    db = open_database(tmp_path, compact_at=20_000)
    for i in range(300):
        db.things.insert_one({"_id": i, "v": "x" * 100})  # about 40 KB of journal
    assert db.journal.wait_for_compaction()
    names = os.listdir(tmp_path)
    assert any(name.startswith("snapshot-") for name in names)
    assert "journal-000001.jsonl" not in names
    before = contents(db)
    assert contents(reopened(db)) == before


def test_a_compaction_whose_merge_fails_is_done_again_from_memory(tmp_path, monkeypatch, caplog,
        contents):
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i} for i in range(5)])
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the merging process fails
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    assert "failed (exit status" in caplog.text
    assert not any(name.startswith("snapshot-") for name in os.listdir(tmp_path))
    db.things.insert_one({"_id": 5})
    db.journal.compact()  # a fork, which does not run sys.executable
    assert db.journal.wait_for_compaction()
    assert "snapshot-000003.bson" in os.listdir(tmp_path)
    before = contents(db)
    assert contents(reopened(db)) == before


def test_a_compaction_that_cannot_start_its_merge_forks(tmp_path, monkeypatch, caplog, contents):
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i} for i in range(5)])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    assert "could not start its merge" in caplog.text
    assert "snapshot-000002.bson" in os.listdir(tmp_path)
    before = contents(db)
    assert contents(reopened(db)) == before
