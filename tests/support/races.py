"""What the race tests share: the app on a real threaded HTTP server
(`served`, a fixture), callables released at once (`run_together`), and the
anomalies a race counts round after round (`Anomalies`). Rounds: RACE_ROUNDS."""
import os
import sys
import threading

import pytest

from tests.conftest import ADMIN_TOKEN
from tests.support.served import call as served_call

ROUNDS = int(os.environ.get("RACE_ROUNDS", "200"))


@pytest.fixture
def served(base_url):
    """The app on a real threaded HTTP server on loopback (conftest's
    `base_url`); yields a caller
    `served(method, path, body=None, headers=None, token=ADMIN_TOKEN)`."""
    port = int(base_url.rsplit(":", 1)[1])
    # Switch threads far more often than Python's default 5 ms, so that
    # rounds interleave requests at many more points between their steps.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)

    def call(method, path, body=None, headers=None, token=ADMIN_TOKEN):
        return served_call(port, method, path, body, headers, token)
    call.port = port
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
