"""What the next start must find (inventory/embedded/manifest.py): a start
that finds evidence of lost data (a file the manifest or an earlier
version's `current-segment` names is gone, or shorter than recorded)
refuses, changing nothing, and says how to recover; the recovery it names
starts with what is left."""
import json
import os
import subprocess
import sys

import pytest

from inventory.embedded.data_directory import JournalCorrupt
from tests.conftest import ADMIN_TOKEN
from tests.support.directory_faults import (
    crashed_copy,
    delete_segment,
    delete_snapshot,
    empty,
    truncate_in_place,
)
from tests.support.journaled import first_estate, ids, journaled_gunicorn, open_database
from tests.support.served import ROOT, free_port

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


def test_a_data_directory_whose_journal_was_deleted_does_not_start_empty(tmp_path):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    db.journal.close()
    (tmp_path / "journal-000001.jsonl").unlink()
    with pytest.raises(JournalCorrupt, match="journal-000001.jsonl is missing"):
        open_database(tmp_path)


def test_after_a_compaction_the_current_segment_is_the_one_required(tmp_path):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    db.journal.compact()
    db.journal.wait_for_compaction()
    db.things.insert_one({"_id": 2})
    db.journal.close()
    assert json.loads((tmp_path / "manifest.json").read_text())["current"] == 2
    again = open_database(tmp_path)
    assert sorted(d["_id"] for d in again.things.find()) == [1, 2]
    again.journal.close()
    (tmp_path / "journal-000002.jsonl").unlink()  # the snapshot alone would lose _id 2
    with pytest.raises(JournalCorrupt, match="journal-000002.jsonl is missing"):
        open_database(tmp_path)


def test_a_segment_shorter_than_recorded_refuses_the_start(tmp_path):
    db = open_database(tmp_path / "data")
    db.things.insert_many([{"_id": i} for i in range(3)])
    db.journal.close()
    truncate_in_place(tmp_path / "data")  # while nothing ran
    with pytest.raises(JournalCorrupt, match="shorter than the .* move manifest.json"):
        open_database(tmp_path / "data")


def test_a_segment_shorter_than_its_synced_size_refuses_the_start_after_a_crash(tmp_path,
        store_lock):
    db = open_database(tmp_path / "data", fsync="always")
    db.things.insert_many([{"_id": i} for i in range(3)])
    db.journal.check(store_lock)  # the guard records the size known synced
    crashed = crashed_copy(db, tmp_path)
    truncate_in_place(crashed)
    with pytest.raises(JournalCorrupt, match="shorter than the"):
        open_database(crashed)
    db.journal.close()


def _stopped_after_a_compaction(directory):
    """A data dir stopped cleanly with a snapshot (one record) and a segment
    after it (another)."""
    db = open_database(directory)
    db.things.insert_one({"_id": 1})
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.things.insert_one({"_id": 2})
    db.journal.close()


@pytest.mark.parametrize("lost", [delete_segment, delete_snapshot, "everything but the manifest"])
def test_a_start_refuses_when_the_manifest_names_files_that_are_gone(tmp_path, lost):
    directory = tmp_path / "data"
    _stopped_after_a_compaction(directory)
    if lost == "everything but the manifest":
        for name in os.listdir(directory):
            if name != "manifest.json":
                os.remove(directory / name)
    else:
        lost(directory)
    untouched = sorted(os.listdir(directory))
    with pytest.raises(JournalCorrupt, match="is missing, but .*manifest.json records it.*"
                                             "Restore the data directory from a backup"):
        open_database(directory)
    assert set(os.listdir(directory)) == {*untouched, "lock"}  # nothing changed


def test_a_start_after_a_fault_whose_snapshot_never_landed_refuses(tmp_path, monkeypatch):
    """Killed between the fault and its snapshot: the manifest names the
    snapshot being written, which is not there."""
    db = open_database(tmp_path / "data")
    db.things.insert_one({"_id": 1})
    empty(tmp_path / "data")
    db.journal.inspect()
    child = subprocess.Popen(["sleep", "60"])  # a snapshot's child that writes nothing
    monkeypatch.setattr(os, "fork", lambda: child.pid)
    db.journal.recover(now=True)
    crashed = crashed_copy(db, tmp_path)  # the process killed now
    child.kill()
    with pytest.raises(JournalCorrupt, match="snapshot-.* is missing"):
        open_database(crashed)
    db.journal.close()


def test_the_recovery_the_message_names_starts_with_what_is_left(tmp_path):
    _stopped_after_a_compaction(tmp_path)
    truncate_in_place(tmp_path)
    with pytest.raises(JournalCorrupt):
        open_database(tmp_path)
    (tmp_path / "manifest.json").rename(tmp_path.parent / "manifest.json.moved")
    db = open_database(tmp_path)
    assert ids(db) == [1]  # the snapshot's; what the truncated segment held is gone
    db.journal.close()


@pytest.mark.slow
def test_served_a_start_refuses_on_evidence_of_lost_data(tmp_path):
    directory = tmp_path / "data"
    server = journaled_gunicorn(directory)
    try:
        first_estate(server)
    finally:
        server.stop()
    truncate_in_place(directory)  # while stopped: nothing can write a snapshot now
    environment = {**os.environ, "PORT": str(free_port()), "WEB_CONCURRENCY": "1",
                   "INVENTORY_ADMIN_TOKEN": ADMIN_TOKEN, "INVENTORY_DATA_DIR": str(directory)}
    environment.pop("MONGODB_URI", None)
    started = subprocess.run([sys.executable, "-m", "gunicorn", "app:app"], cwd=ROOT,
                             env=environment, capture_output=True, text=True, timeout=120)
    assert started.returncode != 0
    assert "shorter than the" in started.stderr
    assert "Restore the data directory from a backup" in started.stderr


def test_the_manifest_records_the_chain_and_the_size_known_synced(tmp_path, store_lock):
    db = open_database(tmp_path, fsync="always")
    db.things.insert_one({"_id": 1})
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.things.insert_one({"_id": 2})
    db.journal.check(store_lock)  # the guard records the size known synced
    recorded = json.loads((tmp_path / "manifest.json").read_text())
    snapshot, segment = tmp_path / "snapshot-000002.bson", tmp_path / "journal-000002.jsonl"
    assert recorded == {"snapshot": 2, "snapshot_bytes": snapshot.stat().st_size,
                        "segments": {"2": segment.stat().st_size}, "current": 2}
    db.journal.close()
