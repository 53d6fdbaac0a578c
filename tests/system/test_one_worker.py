"""One process owns the embedded store, whatever gunicorn is told at run
time (issue 43): gunicorn as the Procfile runs it, on the embedded store
with a data directory and in memory only. SIGTTIN to the master, gunicorn's
documented way to add a worker, is refused with a log line: one worker
still, the same one, every read answered from the one store. A worker that
dies is still replaced, and a reload (SIGHUP) still replaces the worker."""
import os
import signal
import time

import pytest

from tests.support.served import Gunicorn, children

pytestmark = pytest.mark.slow

TOKEN = "one-worker-test-token"
REFUSED = "Not adding a worker"
READS = 20


def _wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.1)


def _reads_all(server, org, title):
    """Every one of READS reads, each on a connection of its own, finds the
    organization: one store answers them all."""
    answers = [server.request("GET", f"/organizations/{org}") for _ in range(READS)]
    assert [(a.status, a.body.get("title")) for a in answers] == [(200, title)] * READS


def _one_worker(server):
    return len(children(server.process.pid)) == 1


@pytest.fixture(params=["data directory", "memory only"])
def served(request, tmp_path):
    data = str(tmp_path / "data") if request.param == "data directory" else ""
    server = Gunicorn(TOKEN, log=tmp_path / "gunicorn.log", env={"INVENTORY_DATA_DIR": data})
    server.journaled = bool(data)
    yield server
    server.stop(quick=True)


def test_ttin_adds_no_worker_to_the_embedded_store(served):
    worker = served.worker()
    org = served.request("POST", "/organizations", {"title": "Acme"}).body["id"]
    for _ in range(3):
        os.kill(served.process.pid, signal.SIGTTIN)
        time.sleep(0.3)
    _wait_for(lambda: served.log_text().count(REFUSED) == 3, 10, "no line said it")
    # long enough for an added worker to have booted (or, waiting for the
    # lock, to have failed and stopped the service: LOCK_WAIT is 10 s)
    deadline = time.monotonic() + 12
    while time.monotonic() < deadline:
        assert children(served.process.pid) == [worker]
        assert served.request("GET", "/healthz").status == 200
        time.sleep(0.5)
    _reads_all(served, org, "Acme")
    later = served.request("POST", "/organizations", {"title": "Later"}).body["id"]
    _reads_all(served, later, "Later")

    # a worker that dies is still replaced (with a data directory, by one
    # that finds the data again)
    os.kill(worker, signal.SIGKILL)
    _wait_for(lambda: children(served.process.pid) not in ([], [worker]), 30, "not replaced")
    served.wait_ready("/healthz", 60)
    replaced = served.worker()
    assert replaced != worker and _one_worker(served)
    if served.journaled:
        _reads_all(served, org, "Acme")

    # a reload (SIGHUP) replaces the worker, and still one serves
    os.kill(served.process.pid, signal.SIGHUP)
    _wait_for(lambda: children(served.process.pid) not in ([], [replaced]) and
              _one_worker(served), 60, "the reload did not replace the worker")
    served.wait_ready("/healthz", 60)
    if served.journaled:
        _reads_all(served, org, "Acme")
    assert served.process.poll() is None
    assert served.log_text().count(REFUSED) == 3  # a reload and a replacement add none
