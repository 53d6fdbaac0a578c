"""Streams are not requests in flight, over real sockets, under gunicorn as
the Procfile runs it: a person's many streams (console tabs) and that
person's script on one token are all answered; a departed client's share
is free again within 5 s; past the share the oldest stream ends and resumes
from its last id, and nothing is refused (docs/limits.md).

STREAMS_TEST_PORT serves on that port rather than a free one."""
import os
import socket
import threading
import time
import uuid

import pytest

from inventory.core.caps import LONG_LIVED_PER_ORGANIZATION
from tests.support.served import Gunicorn

TOKEN = "stream-shares-admin-token"
ENDED = b": ended:"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    port = int(os.environ.get("STREAMS_TEST_PORT") or 0) or None
    log = tmp_path_factory.mktemp("streams") / "gunicorn.log"
    server = Gunicorn(TOKEN, log=log, port=port)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    """gunicorn's two workers on one MongoDB database of their own (scripts/wire
    sets MONGODB_URI): the shares and the slots in flight are each process's."""
    if not os.environ.get("MONGODB_URI"):
        pytest.skip("several workers share a database on MongoDB only (scripts/wire)")
    port = int(os.environ.get("STREAMS_TEST_PORT") or 0)
    log = tmp_path_factory.mktemp("streams-2") / "gunicorn.log"
    server = Gunicorn(TOKEN, log=log, port=port + 1 if port else None, env={
        "WEB_CONCURRENCY": "2", "MONGODB_URI": os.environ["MONGODB_URI"],
        "MONGODB_DB": f"inventory_test_{uuid.uuid4().hex[:12]}"})
    yield server
    server.stop()


def _person_of(served):
    org = served.request("POST", "/organizations", {"title": "Tabs"}).body["id"]
    made = served.request("POST", "/tokens", {"name": "a person", "role": "writer",
                                              "organization": org}).body
    return org, made["token"]


@pytest.fixture
def person(served):
    """A tenant and one person's token in it (a writer, as a script's is)."""
    return _person_of(served)


class Stream:
    """One stream of the feed on its own connection, read as it comes."""

    def __init__(self, port, token, last_event_id=None):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        resume = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
        self.sock.sendall(f"GET /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                          f"{token}\r\nAccept: text/event-stream\r\n{resume}\r\n".encode())
        self.received, self.closed = b"", False

    def read_until(self, wanted, timeout=10):
        """Read until `wanted` arrives (True), or the server closes (False)."""
        deadline = time.monotonic() + timeout
        while wanted not in self.received:
            if self.closed or time.monotonic() > deadline:
                return wanted in self.received
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                self.closed = True
            self.received += chunk
        return True

    def ids(self):
        return [line[4:].decode() for line in self.received.split(b"\n")
                if line.startswith(b"id: ")]

    def close(self):
        self.sock.close()


def _change(served, org, title):
    assert served.request("PATCH", f"/organizations/{org}", {"title": title}).status == 200
    return title.encode()


def _script(served, token, org, rounds, answers):
    """A person's script: reads and writes on the person's token."""
    for index in range(rounds):
        answers.append(served.request("GET", "/kubeclusters", token=token).status)
        answers.append(served.request("GET", f"/organizations/{org}", token=token).status)
        answers.append(served.request("GET", "/events?limit=5", token=token).status)
        if index % 3 == 0:
            answers.append(served.request("POST", "/kubeplatforms", {
                "name": f"p-{threading.get_ident()}-{index}", "organization": org,
                "control_plane": {"provider": "eks"},
                "infrastructure": {"cloud": {"provider": "aws"}}}, token=token).status)


def test_ten_streams_and_a_script_on_one_token_are_all_answered(served, person):
    _ten_streams_and_a_script(served, *person)


def test_ten_streams_and_a_script_on_one_token_over_several_workers(two_workers):
    _ten_streams_and_a_script(two_workers, *_person_of(two_workers))


def _ten_streams_and_a_script(served, org, token):
    tabs = [Stream(served.port, token) for _ in range(10)]
    for tab in tabs:
        assert tab.read_until(b"retry:") and tab.received.startswith(b"HTTP/1.1 200")
    answers = []
    # the script, four requests at once (the limit in flight) beside the ten
    scripts = [threading.Thread(target=_script, args=(served, token, org, 6, answers))
               for _ in range(4)]
    for script in scripts:
        script.start()
    for script in scripts:
        script.join(60)
    assert answers and set(answers) <= {200, 201}, sorted(set(answers))
    seen = _change(served, org, "every tab sees it")
    assert all(tab.read_until(seen) for tab in tabs)
    assert not any(ENDED in tab.received for tab in tabs)
    for tab in tabs:
        tab.close()


def test_a_departed_streams_share_is_free_within_5_s(served, person):
    """The share full, ten clients go away; 5 s later ten new streams come:
    none of the ninety that stayed is ended for them."""
    org, token = person
    share = [Stream(served.port, token) for _ in range(LONG_LIVED_PER_ORGANIZATION)]
    for stream in share:
        assert stream.read_until(b"retry:")
        time.sleep(0.002)  # opened one after another: the first is the oldest
    for stream in share[-10:]:  # the newest tabs closed: the oldest would be ended else
        stream.close()
    time.sleep(5)
    newcomers = [Stream(served.port, token) for _ in range(10)]
    for stream in newcomers:
        assert stream.read_until(b"retry:")
    seen = _change(served, org, "after the departures")
    stayed = share[:-10] + newcomers
    assert all(stream.read_until(seen) for stream in stayed)
    assert not [stream for stream in stayed if ENDED in stream.received or stream.closed]
    for stream in stayed:
        stream.close()


def test_past_the_share_the_oldest_stream_ends_resumes_and_nothing_is_refused(served, person):
    org, token = person
    share = [Stream(served.port, token) for _ in range(LONG_LIVED_PER_ORGANIZATION)]
    for stream in share:
        assert stream.read_until(b"retry:")
        time.sleep(0.002)  # opened one after another: the first is the oldest
    first_seen = _change(served, org, "before the newcomer")
    assert share[0].read_until(first_seen)
    newcomer = Stream(served.port, token)
    assert newcomer.read_until(b"retry:") and newcomer.received.startswith(b"HTTP/1.1 200")
    assert share[0].read_until(ENDED, timeout=5), "the oldest stream goes on past the share"
    # and its body ends: its last chunk, or the connection closed (which
    # one depends on the keep-alive's 5 s, not on the rule)
    assert share[0].read_until(b"\r\n0\r\n\r\n", timeout=10) or share[0].closed, \
        share[0].received[-300:]
    assert served.request("GET", "/kubeclusters", token=token).status == 200
    # its client resumes from the last id it saw and misses nothing
    missed = _change(served, org, "while it reconnected")
    resumed = Stream(served.port, token, last_event_id=share[0].ids()[-1])
    assert resumed.read_until(missed)
    assert resumed.ids() and not set(resumed.ids()) & set(share[0].ids())  # nothing twice
    # the next oldest made way for it; every other one goes on
    assert share[1].read_until(ENDED, timeout=5)
    seen = _change(served, org, "after the resume")
    assert all(stream.read_until(seen) for stream in share[2:] + [newcomer])
    assert not [stream for stream in share[2:] if ENDED in stream.received]
    for stream in share + [newcomer, resumed]:
        stream.close()
