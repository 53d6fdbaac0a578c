"""The change feed under parallel writers, with real threads against the app
served over HTTP: while writers change records at once, round after round,
one reader polls with `after` and another streams Server-Sent Events,
reconnecting with `Last-Event-ID`. Each must receive every event exactly
once, in feed order, and each record's updates must chain (each one's
`from` is the previous one's `to`)."""
import http.client
import json
import os
import threading
import time

import pytest

from tests.conftest import ADMIN_TOKEN
from tests.support.races import run_together

ROUNDS = int(os.environ.get("FEED_RACE_ROUNDS", "200"))
WRITERS = 6

pytestmark = pytest.mark.slow


class Poller(threading.Thread):
    """Follows the feed with `after` and `wait`, as a script would."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.seen, self.done = port, [], threading.Event()

    def run(self):
        try:
            self._follow()
        except (OSError, http.client.HTTPException):
            if not self.done.is_set():  # else cut by the servers' stop: done anyway
                raise

    def _follow(self):
        after = None
        while not self.done.is_set():
            query = f"/events?limit=100&wait=1{f'&after={after}' if after else ''}"
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            connection.request("GET", query, headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
            body = json.loads(connection.getresponse().read())
            connection.close()
            self.seen += body["results"]
            if body["results"]:
                after = body["results"][-1]["id"]


class Streamer(threading.Thread):
    """Follows the feed as Server-Sent Events, dropping the connection every
    so often and resuming with `Last-Event-ID`."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.seen, self.done = port, [], threading.Event()
        self.reconnects = 0

    def run(self):
        try:
            self._follow()
        except (OSError, http.client.HTTPException):
            if not self.done.is_set():  # else cut by the servers' stop: done anyway
                raise

    def _follow(self):
        last = None
        while not self.done.is_set():
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            headers = {"Authorization": f"Bearer {ADMIN_TOKEN}", "Accept": "text/event-stream"}
            if last:
                headers["Last-Event-ID"] = last
            connection.request("GET", "/events", headers=headers)
            response = connection.getresponse()
            fields, received = {}, 0
            while not self.done.is_set() and received < 25:  # then reconnect
                line = response.fp.readline().decode().rstrip("\n")
                if line == "":
                    if "id" in fields:
                        self.seen.append(json.loads(fields["data"]))
                        last, received = fields["id"], received + 1
                    fields = {}
                elif not line.startswith(":") and ": " in line:
                    name, value = line.split(": ", 1)
                    fields[name] = value
            connection.close()
            self.reconnects += 1


def test_every_reader_gets_every_event_once_in_order_under_parallel_writers(served):
    org = served("POST", "/organizations", {"title": "shared-0"}).body["id"]
    served("POST", "/kubeplatforms", {"name": "p", "organization": org,
                                      "control_plane": {"provider": "eks"},
                                      "infrastructure": {"cloud": {"provider": "aws"}}})
    # each in another process where there are two
    poller, streamer = Poller(served.ports[0]), Streamer(served.ports[-1])
    poller.start()
    streamer.start()
    for round_ in range(ROUNDS):
        def writer(index, round_=round_):
            def write():
                # everyone retitles the shared organization; each makes and
                # changes a cluster of its own, and every other round deletes it
                served("PATCH", f"/organizations/{org}", {"title": f"r{round_}-w{index}"})
                name = f"c-{round_}-{index}"
                served("POST", "/kubeclusters", {"name": name, "platform": "p",
                                                 "environment": "e", "version": "1.30"})
                served("PATCH", f"/kubeclusters/{name}", {"version": "1.31"})
                if round_ % 2:
                    served("DELETE", f"/kubeclusters/{name}")
            return write
        run_together([writer(index) for index in range(WRITERS)])
    final = _walk_all(served)
    _wait_until(lambda: len(poller.seen) >= len(final) and len(streamer.seen) >= len(final))
    poller.done.set()
    streamer.done.set()
    ids = [event["id"] for event in final]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    lost_or_doubled = {
        "poller": [e["id"] for e in poller.seen] != ids,
        "streamer": [e["id"] for e in streamer.seen[:len(ids)]] != ids,
    }
    chains = {}  # subject -> the `to` of its last update
    broken = []
    for event in final:
        if event["type"].endswith(".updated"):
            for field, change in event["changes"].items():
                key = (event["subject"], field)
                if key in chains and chains[key] != change["from"]:
                    broken.append((event["id"], field))
                chains[key] = change["to"]
    expected = 2 + ROUNDS * WRITERS * 3 + (ROUNDS // 2) * WRITERS
    print(f"\n{ROUNDS} rounds x {WRITERS} writers: {len(final)} events; poller "
          f"{len(poller.seen)}, streamer {len(streamer.seen)} "
          f"({streamer.reconnects} reconnects)")
    assert len(final) == expected
    assert not any(lost_or_doubled.values()), lost_or_doubled
    assert not broken


def _walk_all(call):
    events, after = [], None
    while True:
        answer = call("GET", f"/events?limit=100{f'&after={after}' if after else ''}")
        if not answer.body["results"]:
            return events
        events += answer.body["results"]
        after = events[-1]["id"]


def _wait_until(condition, seconds=60):
    ends = time.monotonic() + seconds
    while not condition() and time.monotonic() < ends:
        time.sleep(0.1)


def test_one_process_times_never_go_back_along_the_feed_under_parallel_writers(served):
    """The app served by one process, writers at once round after round:
    scans (each event made before the cluster update it causes, published
    after it), cluster and organization changes. Along the feed's order
    `occurred_on` never goes back (docs/events.md)."""
    if served.serving != "app":
        pytest.skip("several processes stamp by their own clocks: docs/events.md says what "
                    "holds between them")
    org = served("POST", "/organizations", {"title": "times"}).body["id"]
    served("POST", "/kubeplatforms", {"name": "p", "organization": org,
                                      "control_plane": {"provider": "eks"},
                                      "infrastructure": {"cloud": {"provider": "aws"}}})
    for index in range(WRITERS):
        served("POST", "/kubeclusters", {"name": f"t{index}", "platform": "p",
                                         "environment": "e", "version": "1.30"})
    rounds = max(ROUNDS // 4, 10)
    for round_ in range(rounds):
        def writer(index, round_=round_):
            def write():
                served("POST", f"/kubeclusters/t{index}/scans",
                       {"server": {"git_version": f"v1.30.{round_ % 9}"}})
                served("PATCH", f"/kubeclusters/t{index}", {"labels": {"round": str(round_)}})
                served("PATCH", f"/organizations/{org}", {"title": f"r{round_}-w{index}"})
            return write
        run_together([writer(index) for index in range(WRITERS)])
    final = _walk_all(served)
    back = [(a["id"], a["type"], a["occurred_on"], b["id"], b["type"], b["occurred_on"])
            for a, b in zip(final, final[1:]) if b["occurred_on"] < a["occurred_on"]]
    print(f"\n{rounds} rounds x {WRITERS} writers: {len(final)} events, {len(back)} back in time")
    assert len(final) >= rounds * WRITERS * 3
    assert not back, back[:3]
