"""What the race tests share: the app served over real HTTP (`served`, a
fixture: in this process, or by two gunicorn workers or two instances on
MONGODB_URI's server), callables released at once (`run_together`), and the
anomalies a race counts round after round (`Anomalies`). Rounds: RACE_ROUNDS."""
import itertools
import os
import sys
import threading

import pytest

from tests.conftest import ADMIN_TOKEN, REAL_MONGO
from tests.support.served import Gunicorn, environment_of
from tests.support.served import call as served_call

ROUNDS = int(os.environ.get("RACE_ROUNDS", "200"))


# How the races are served: the app in this process (a threaded server), or
# on MONGODB_URI's server as the Procfile serves it, by several processes on
# one database: gunicorn with two workers (WEB_CONCURRENCY=2), or two
# gunicorns of one worker each on two ports (two instances, as two dynos),
# the requests going to each in turn. RACE_SERVINGS names some (scripts/wire:
# the two with several processes).
SERVINGS = tuple(os.environ.get("RACE_SERVINGS", "app,workers,instances").split(","))


@pytest.fixture(params=SERVINGS)
def served(request, app, config):
    """The races' app, served as the param says (SERVINGS); yields a caller
    `served(method, path, body=None, headers=None, token=ADMIN_TOKEN)`, with
    `port` (the first server's) and `ports` (every server's)."""
    if request.param == "app":
        yield from _served_here(request.getfixturevalue("base_url"))
        return
    if not REAL_MONGO:
        pytest.skip("several processes need a shared database: MONGODB_URI (scripts/wire)")
    env = {**environment_of(config), "MONGODB_URI": os.environ["MONGODB_URI"],
           "MONGODB_DB": app.extensions["inventory.store"].db.name}  # its indexes made
    concurrency, count = ("2", 1) if request.param == "workers" else ("1", 2)
    servers, failures, lock = [], [], threading.Lock()
    logs = request.getfixturevalue("tmp_path")

    def start():
        try:
            server = Gunicorn(ADMIN_TOKEN, env={**env, "WEB_CONCURRENCY": concurrency},
                              ready="/readyz", log=logs / "gunicorn-{port}.log",
                              timeout=120)  # two at once, on a loaded machine
        except Exception as error:  # noqa: BLE001 (raised below, in the test)
            failures.append(error)
            return
        with lock:
            servers.append(server)
    try:
        run_together([start] * count)  # each start takes seconds: at once
        if failures:
            raise failures[0]
        turns = itertools.cycle(servers)

        def call(method, path, body=None, headers=None, token=ADMIN_TOKEN):
            with lock:
                server = next(turns)
            return served_call(server.port, method, path, body, headers, token)
        call.port, call.ports, call.servers = servers[0].port, [s.port for s in servers], servers
        call.serving = request.param
        yield call
    finally:
        for server in servers:
            server.stop(quick=True)


def _served_here(base_url):
    """The app on a real threaded HTTP server on loopback (conftest's
    `base_url`)."""
    port = int(base_url.rsplit(":", 1)[1])
    # Switch threads far more often than Python's default 5 ms, so that
    # rounds interleave requests at many more points between their steps.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)

    def call(method, path, body=None, headers=None, token=ADMIN_TOKEN):
        return served_call(port, method, path, body, headers, token)
    call.port, call.ports, call.servers, call.serving = port, [port], [], "app"
    yield call
    sys.setswitchinterval(switch_interval)


def run_together(calls):
    """Run the callables at once (released by a barrier); their results in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(index, fn):
        barrier.wait()
        results[index] = fn()
    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


class Anomalies:
    """Counts, per kind, what a round found wrong; the test asserts none."""

    def __init__(self, race):
        self.race, self.found = race, {}

    def check(self, kind, bad):
        if bad:
            self.found.setdefault(kind, []).append(bad)

    def assert_none(self, rounds, requests):
        print(f"\n{self.race}: {rounds} rounds, {requests} requests, "
              f"anomalies: {sum(len(v) for v in self.found.values())}")
        assert self.found == {}, {kind: cases[:3] for kind, cases in self.found.items()}
