"""The guard (inventory/embedded/guard.py): a journal truncated in place,
replaced or deleted, or a data directory emptied, under a running process:
the process notices, refuses writes (and /readyz) with the reason, writes a
full snapshot of what it holds, and accepts writes again; every
acknowledged write survives a restart. The store on its own here; the
served test runs gunicorn as the Procfile does."""
import logging
import os
import signal
import time

import pytest

from inventory.core.errors import Unavailable
from inventory.embedded.data_directory import DataDirectoryInUse
from inventory.embedded.database import embedded_database
from inventory.embedded.journal import Journal
from tests.support.directory_faults import FAULTS, delete_segment, empty, replace, truncate_in_place
from tests.support.journaled import (
    first_estate,
    ids,
    journaled_gunicorn,
    open_database,
    reopened,
    write_clusters,
)

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


@pytest.mark.parametrize("fault", FAULTS, ids=lambda fault: fault.__name__)
def test_a_fault_refuses_writes_until_a_snapshot_of_memory_holds_every_acknowledged_write(tmp_path,
        fault, caplog, store_lock):
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

    db.journal.check(store_lock)  # the guard's next round starts the snapshot
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


def test_the_lock_file_removed_with_the_directory_is_made_again(tmp_path, store_lock):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    empty(tmp_path)
    db.journal.inspect()
    db.journal.check(store_lock)
    assert db.journal.wait_for_compaction()
    with pytest.raises(DataDirectoryInUse):  # the directory is still this process's alone
        Journal(str(tmp_path), lock_wait=0)
    db.journal.close()


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
    server = journaled_gunicorn(directory)
    try:
        token = first_estate(server)
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
        write_clusters(server, after)
        log = server.log_text()
        assert what in log and "writing a full snapshot" in log and "durable again" in log
        clusters = [f"before-{i}" for i in range(10)] + after
        if server.request("GET", "/kubeclusters/refused").status == 200:
            clusters.append("refused")  # refused, yet in memory: it may stay (as on a full disk)
        _kill_worker(server)
        _assert_all_there(server, clusters, token)
    finally:
        server.stop()
    server = journaled_gunicorn(directory)  # and a whole new server
    try:
        _assert_all_there(server, clusters, token)
    finally:
        server.stop()
