"""The data directory (inventory/embedded/data_directory.py): one process
owns it, a killed owner frees it, and a lock file removed under its owner
is made again unless another process took the directory."""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from inventory.embedded.data_directory import DataDirectory, DataDirectoryInUse, size_fault
from inventory.embedded.journal import Journal
from tests.support.journaled import make_app, open_database

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


def test_only_one_process_owns_a_data_directory(tmp_path):
    db = open_database(tmp_path)
    with pytest.raises(DataDirectoryInUse, match=rf"{tmp_path} is in use .*pid {os.getpid()}"):
        Journal(str(tmp_path), lock_wait=0.2)
    with pytest.raises(DataDirectoryInUse):  # the app does not start
        make_app(tmp_path)
    db.journal.close()
    Journal(str(tmp_path), lock_wait=0).close()  # free once its owner lets go


def test_a_killed_owner_frees_the_directory_for_the_next(tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from inventory.embedded.database import LockedDatabase, _holders, embedded_database
        db = embedded_database("inventory", {str(tmp_path)!r}, "no")
        db.things.insert_one({{"_id": "acknowledged"}})
        print("ready", flush=True)
        time.sleep(60)
        """)], stdout=subprocess.PIPE, cwd=os.path.abspath(__file__).rsplit("/tests/", 1)[0])
    try:
        assert owner.stdout.readline() == b"ready\n"
        with pytest.raises(DataDirectoryInUse, match=f"pid {owner.pid}"):
            Journal(str(tmp_path), lock_wait=0)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        db = open_database(tmp_path)
        assert db.things.find_one({}) == {"_id": "acknowledged"}
    finally:
        owner.kill()
        owner.wait()


def test_files_are_named_by_kind_and_number(tmp_path):
    directory = DataDirectory(str(tmp_path / "made"))  # made when missing
    assert directory.file("snapshot", 7) == str(tmp_path / "made" / "snapshot-000007.bson")
    assert directory.file("journal", 12) == str(tmp_path / "made" / "journal-000012.jsonl")
    assert directory.file("snapshot", 3, "jsonl").endswith("snapshot-000003.jsonl")
    for name in ("journal-000004.jsonl", "snapshot-000002.bson", "notes.txt", "x.tmp"):
        (tmp_path / "made" / name).write_bytes(b"")
    assert sorted(directory.numbers()) == [2, 4]
    assert (tmp_path / "made" / "lock").read_text() == f"{os.getpid()}\n"
    directory.unlock()


def test_a_removed_lock_file_is_made_again_unless_another_process_took_it(tmp_path):
    directory = DataDirectory(str(tmp_path))
    assert directory.fault_in_lock() is None
    directory.own_the_lock_file()  # already its own: nothing changes
    os.remove(tmp_path / "lock")
    assert "was deleted" in directory.fault_in_lock()
    directory.own_the_lock_file()
    assert directory.fault_in_lock() is None
    with pytest.raises(DataDirectoryInUse):
        DataDirectory(str(tmp_path), lock_wait=0)
    os.remove(tmp_path / "lock")
    other = DataDirectory(str(tmp_path), lock_wait=0)  # another owner meanwhile
    with pytest.raises(DataDirectoryInUse, match="took the data directory"):
        directory.own_the_lock_file()
    other.unlock()
    directory.unlock()


def test_a_size_other_than_written_is_named():
    assert size_fault("f", 10, 10) is None
    assert size_fault("f", 4, 10) == "f was truncated in place (4 bytes; this process wrote 10)"
    assert "written to by another process (12 bytes" in size_fault("f", 12, 10)
