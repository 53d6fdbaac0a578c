"""A journal cannot be lost quietly (inventory/embedded/journal.py, the guard).

A journal truncated in place, replaced or deleted, or a data directory
emptied, under a running process: the process notices, refuses writes (and
/readyz) with the reason, writes a full snapshot of what it holds, and
accepts writes again; every acknowledged write survives a restart. A start
that finds evidence of lost data refuses, saying how to recover. The store
on its own here; the served tests run gunicorn as the Procfile does."""
import logging
import os
import shutil
import signal
import subprocess
import sys
import time

import mongomock_ng
import pytest

from inventory.core.errors import Unavailable
from inventory.embedded.data_directory import DataDirectoryInUse, JournalCorrupt
from inventory.embedded.database import _LOCK, LockedDatabase, embedded_database
from inventory.embedded.journal import Journal
from tests.conftest import ADMIN_TOKEN
from tests.support.served import ROOT, Gunicorn, free_port

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


def open_database(directory, fsync="no"):
    raw = mongomock_ng.MongoClient()["inventory"]
    return LockedDatabase(raw, Journal.open(str(directory), raw, fsync))


def ids(database):
    return sorted((document["_id"] for document in database.things.find()),
                  key=lambda key: (type(key).__name__, key))


def truncate_in_place(directory):
    """`: > journal-....jsonl`: the newest segment emptied, the same file."""
    newest = max(name for name in os.listdir(directory) if name.startswith("journal-"))
    os.truncate(directory / newest, 0)
    return "truncated in place"


def replace(directory):
    """A copy put in its place, as a restore tool does: the same bytes, a new file."""
    newest = max(name for name in os.listdir(directory) if name.startswith("journal-"))
    shutil.copy(directory / newest, directory / "copy")
    os.replace(directory / "copy", directory / newest)
    return "replaced by another file"


def delete_segment(directory):
    newest = max(name for name in os.listdir(directory) if name.startswith("journal-"))
    os.remove(directory / newest)
    return "was deleted"


def delete_snapshot(directory):
    os.remove(directory / next(n for n in os.listdir(directory) if n.startswith("snapshot-")))
    return "was deleted"


def empty(directory):
    for name in os.listdir(directory):
        os.remove(directory / name)
    return "was deleted"


def remove_directory(directory):
    shutil.rmtree(directory)
    return "was deleted"


def append_by_another(directory):
    newest = max(name for name in os.listdir(directory) if name.startswith("journal-"))
    with open(directory / newest, "ab") as other:
        other.write(b'[{"c":"things","put":{"_id":"intruder"}}]\n')
    return "written to by another process"


FAULTS = [truncate_in_place, replace, delete_segment, delete_snapshot, empty, remove_directory,
          append_by_another]


@pytest.mark.parametrize("fault", FAULTS, ids=lambda fault: fault.__name__)
def test_a_fault_refuses_writes_until_a_snapshot_of_memory_holds_every_acknowledged_write(
        tmp_path, fault, caplog):
    directory = tmp_path / "data"
    db = open_database(directory)
    db.things.insert_many([{"_id": i} for i in range(5)])
    db.journal.compact()  # a snapshot and an ended segment as well as the current one
    assert db.journal.wait_for_compaction()
    db.things.insert_many([{"_id": i} for i in range(5, 10)])
    acknowledged = ids(db)
    caplog.set_level(logging.ERROR, "inventory.embedded.journal")
    what = fault(directory)

    # the guard's round (what its timer runs each second) notices it
    assert what in db.journal.inspect()
    with pytest.raises(Unavailable, match=what):
        db.command("ping")  # what /readyz asks: 503, with the reason
    with pytest.raises(Unavailable, match="writes are refused"):
        db.things.insert_one({"_id": "refused"})
    assert ids(db)[:10] == acknowledged  # reads go on
    assert what in caplog.text

    db.journal.check(_LOCK)  # the guard's next round starts the snapshot
    assert "writing a full snapshot" in caplog.text
    assert db.journal.wait_for_compaction()
    assert "durable again" in caplog.text
    assert db.command("ping")["ok"]
    db.things.insert_one({"_id": "after"})
    held = ids(db)
    assert set(acknowledged) | {"after"} <= set(held)
    assert "intruder" not in held  # what another process wrote is not the data

    again = reopened(db)
    assert ids(again) == held
    again.journal.close()


def reopened(database):
    database.journal.close()
    return open_database(database.journal.directory)


def test_the_guard_notices_and_recovers_by_itself(tmp_path):
    """embedded_database runs the guard on a timer: no write is needed."""
    db = embedded_database("inventory", str(tmp_path), "everysec")
    db.things.insert_many([{"_id": i} for i in range(5)])
    truncate_in_place(tmp_path)
    assert _polled(lambda: _refused(db)), "the truncation was not noticed"
    assert _polled(lambda: not _refused(db)), "no snapshot was written"
    db.things.insert_one({"_id": 5})
    db.journal.close()
    assert ids(open_database(tmp_path)) == list(range(6))


def _refused(database):
    try:
        database.command("ping")
    except Unavailable:
        return True
    return False


def _polled(condition, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_lock_file_removed_with_the_directory_is_made_again(tmp_path):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    empty(tmp_path)
    db.journal.inspect()
    db.journal.check(_LOCK)
    assert db.journal.wait_for_compaction()
    with pytest.raises(DataDirectoryInUse):  # the directory is still this process's alone
        Journal(str(tmp_path), lock_wait=0)
    db.journal.close()


def test_a_stop_during_a_fault_writes_the_snapshot_first(tmp_path):
    """The data since the fault lives in memory only: a clean stop saves it."""
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i} for i in range(3)])
    delete_segment(tmp_path)
    db.journal.inspect()
    db.journal.close()
    assert ids(open_database(tmp_path)) == [0, 1, 2]


# -- a start that finds evidence of lost data -----------------------------------

def _crashed_copy(database, tmp_path):
    """The directory's files as a kill -9 of its process would leave them."""
    copy = tmp_path / "crashed"
    shutil.copytree(database.journal.directory, copy, ignore=shutil.ignore_patterns("lock"))
    return copy


def test_a_segment_shorter_than_recorded_refuses_the_start(tmp_path):
    db = open_database(tmp_path / "data")
    db.things.insert_many([{"_id": i} for i in range(3)])
    db.journal.close()
    truncate_in_place(tmp_path / "data")  # while nothing ran
    with pytest.raises(JournalCorrupt, match="shorter than the .* move manifest.json"):
        open_database(tmp_path / "data")


def test_a_segment_shorter_than_its_synced_size_refuses_the_start_after_a_crash(tmp_path):
    db = open_database(tmp_path / "data", fsync="always")
    db.things.insert_many([{"_id": i} for i in range(3)])
    db.journal.check(_LOCK)  # the guard records the size known synced
    crashed = _crashed_copy(db, tmp_path)
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
    crashed = _crashed_copy(db, tmp_path)  # the process killed now
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


# -- served: gunicorn as the Procfile runs it, real processes --------------------

def _served(directory):
    return Gunicorn(ADMIN_TOKEN, env={"INVENTORY_DATA_DIR": str(directory)},
                    log=directory.parent / "gunicorn-{port}.log", ready="/readyz")


def _write_clusters(server, names, platform="p"):
    for name in names:
        status, _, body = server.request("POST", "/kubeclusters", {
            "name": name, "platform": platform, "environment": "dev", "version": "1.30.0"})
        assert status == 201, body


def _first_estate(server):
    """An organization, its platform, 10 clusters and a token: what was acknowledged."""
    status, _, org = server.request("POST", "/organizations", {"title": "Acme"})
    assert status == 201
    assert server.request("POST", "/kubeplatforms", {
        "name": "p", "organization": org["id"], "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}}).status == 201
    _write_clusters(server, [f"before-{i}" for i in range(10)])
    status, _, token = server.request("POST", "/tokens", {"name": "scanner", "role": "reader"})
    assert status == 201
    return token["token"]


def _assert_all_there(server, clusters, token):
    assert server.request("GET", "/readyz").status == 200
    status, _, page = server.request("GET", "/kubeclusters?limit=100")
    assert status == 200
    assert {c["name"] for c in page["results"]} == set(clusters)
    assert all(c["platform"] == "p" for c in page["results"])  # no orphan
    assert server.request("GET", "/kubeplatforms/p").status == 200
    assert server.request("GET", "/kubeclusters", token=token).status == 200


def _kill_worker(server):
    first = server.worker()
    os.kill(first, signal.SIGKILL)  # as an out-of-memory kill does
    assert _polled(lambda: server.worker() != first)
    server.wait_ready()


def _block_snapshots(directory, count=3):
    """Directories where the next snapshots' temporary files go (their
    numbers follow the files there): each attempt fails, and the retries
    back off 1 + 2 + 4 s, so that the refusal is there to be seen."""
    first = 1 + max((int(name.split("-")[1].split(".")[0]) for name in os.listdir(directory)
                     if name.startswith(("journal-", "snapshot-"))), default=1)
    blockers = [directory / f"snapshot-{n:06d}.bson.tmp" for n in range(first, first + count)]
    for blocker in blockers:
        blocker.mkdir()
    return blockers


@pytest.mark.slow
@pytest.mark.parametrize("fault", [truncate_in_place, replace, delete_segment, empty],
                         ids=lambda fault: fault.__name__)
def test_served_a_fault_under_the_worker_loses_no_acknowledged_write(tmp_path, fault):
    directory = tmp_path / "data"
    server = _served(directory)
    try:
        token = _first_estate(server)
        blockers = [] if fault is empty else _block_snapshots(directory)
        what = fault(directory)
        if fault is empty:
            blockers = _block_snapshots(directory)  # (else emptied with the rest)

        status, headers, body = server.request("POST", "/kubeclusters", {
            "name": "refused", "platform": "p", "environment": "dev", "version": "1.30.0"})
        assert status == 503 and what in body["detail"], body  # the service's error format
        assert headers["Content-Type"] == "application/problem+json"
        status, _, body = server.request("GET", "/readyz")
        assert status == 503 and what in body["detail"], body
        assert server.request("GET", "/healthz").status == 200
        assert server.request("GET", "/kubeclusters/before-1").status == 200  # reads go on
        for blocker in blockers:
            blocker.rmdir()

        assert _polled(lambda: server.request("GET", "/readyz").status == 200), \
            server.log_text()
        after = [f"after-{i}" for i in range(10)]
        _write_clusters(server, after)
        log = server.log_text()
        assert what in log and "writing a full snapshot" in log and "durable again" in log
        clusters = [f"before-{i}" for i in range(10)] + after
        if server.request("GET", "/kubeclusters/refused").status == 200:
            clusters.append("refused")  # refused, yet in memory: it may stay (as on a full disk)
        _kill_worker(server)
        _assert_all_there(server, clusters, token)
    finally:
        server.stop()
    server = _served(directory)  # and a whole new server
    try:
        _assert_all_there(server, clusters, token)
    finally:
        server.stop()


@pytest.mark.slow
def test_served_a_start_refuses_on_evidence_of_lost_data(tmp_path):
    directory = tmp_path / "data"
    server = _served(directory)
    try:
        _first_estate(server)
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
