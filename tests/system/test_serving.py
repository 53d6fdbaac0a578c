"""The serving model, under gunicorn exactly as the Procfile runs it: idle,
slow and malformed connections stall no one, restart nothing, lose nothing,
and whatever the server layer refuses answers in the error format."""
import contextlib
import http.client
import json
import os
import resource
import selectors
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

import pytest

from inventory.core.caps import HEADER_TIMEOUT
from tests.support.served import ROOT, Gunicorn

TOKEN = "serving-test-token"
# How long each attack of test_attacks_stall_no_one... lasts; the issue that
# asked for them says 30 s. Shorter for a quick local run.
HOLD_SECONDS = float(os.environ.get("SERVING_HOLD_SECONDS", "30"))

pytestmark = pytest.mark.slow


def Served(preexec_fn=None):
    """gunicorn as the Procfile runs it, its output kept for the tests that read it.
    Every test here calls from 127.0.0.1 and the module's tests share one
    server: the attacks would spend the address's anonymous rate, and a later
    test's request without a token would get a 429 instead of the answer it
    checks. So that rate is set out of reach here (tests/api/test_limits.py
    tests it)."""
    return Gunicorn(TOKEN, log=ROOT / ".venv" / "gunicorn-test-{port}.log", preexec_fn=preexec_fn,
                    timeout=30, env={"RATE_LIMIT_ANONYMOUS": "1000000 per minute"})


@pytest.fixture(scope="module")
def served():
    server = Served()
    yield server
    server.stop()


def _problem(raw_answer, status):
    head, _, body = raw_answer.partition(b"\r\n\r\n")
    assert head.startswith(f"HTTP/1.1 {status} ".encode()), head
    assert b"content-type: application/problem+json" in head.lower()
    problem = json.loads(body)
    assert problem["status"] == status and problem["instance"].startswith("urn:uuid:")
    assert set(problem) == {"$schema", "status", "title", "detail", "type", "instance", "errors"}
    return problem


class Attack:
    """`count` sockets, all driven by one thread, each doing `kind` and opened
    again at once when the server closes it:
    - idle: connects and sends nothing;
    - slow_head: a request line, then a header line every 2 s, never ending;
    - slow_body: a whole head announcing 100,000 bytes, then a byte a second;
    - slow_reader: asks for Swagger UI's 1.7 MB bundle and never reads it.
    """

    PAUSE = {"idle": None, "slow_head": 2.0, "slow_body": 1.0, "slow_reader": None}

    def __init__(self, port, kind, count):
        self.port, self.kind, self.count = port, kind, count
        self.reopened, self.answers, self.refused, self.failure = 0, [], 0, None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self):
        sock = socket.socket()
        if self.kind == "slow_reader":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.settimeout(10)
        try:
            sock.connect(("127.0.0.1", self.port))
        except OSError:
            sock.close()
            return None
        sock.setblocking(False)
        first = {
            "idle": b"",
            "slow_head": b"GET /organizations HTTP/1.1\r\nHost: localhost\r\n",
            "slow_body": b"POST /organizations HTTP/1.1\r\nHost: localhost\r\n"
                         b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{",
            "slow_reader": b"GET /docs/assets/swagger-ui-bundle.js HTTP/1.1\r\n"
                           b"Host: localhost\r\n\r\n",
        }[self.kind]
        with contextlib.suppress(OSError):
            sock.sendall(first)
        return sock

    def _run(self):
        try:
            self._drive()
        except BaseException as error:  # finish() raises it: a dead attacker attacks nothing
            self.failure = error

    def _drive(self):
        # a selector, not select(): the 1,000 idle sockets have descriptors past FD_SETSIZE
        watching = selectors.DefaultSelector()
        for sock in filter(None, (self._open() for _ in range(self.count))):
            watching.register(sock, selectors.EVENT_READ)
        pause, sent_at, line = self.PAUSE[self.kind], time.monotonic(), 0
        while not self.stop.is_set():
            if self.kind != "slow_reader":  # a slow reader never reads
                for key, _ in watching.select(0.2):
                    sock = key.fileobj
                    try:
                        data = sock.recv(65536)
                    except OSError:
                        data = b""
                    if data:
                        self.answers.append(data)
                    if not data or data.startswith(b"HTTP/1.1 "):  # closed, or answered
                        self.refused += data.startswith(b"HTTP/1.1 503")
                        watching.unregister(sock)
                        sock.close()
                        replacement = self._open()
                        if replacement:
                            watching.register(replacement, selectors.EVENT_READ)
                            self.reopened += 1
            else:
                time.sleep(0.2)
            if pause and time.monotonic() - sent_at >= pause:
                sent_at, line = time.monotonic(), line + 1
                piece = f"X-Slow-{line}: {line}\r\n".encode() if self.kind == "slow_head" else b" "
                for key in list(watching.get_map().values()):
                    with contextlib.suppress(OSError):
                        key.fileobj.send(piece)
        for key in list(watching.get_map().values()):
            key.fileobj.close()
        watching.close()

    def finish(self):
        self.stop.set()
        self.thread.join()
        if self.failure:
            raise self.failure


def _probe_under(served, attack, seconds, org):
    """Probe `/healthz` and an authenticated GET every 0.5 s while `attack`
    holds; the slowest answer of each, in seconds."""
    worst = {"/healthz": 0.0, f"/organizations/{org}": 0.0}
    try:
        started = time.monotonic()
        while time.monotonic() - started < seconds:
            for path in worst:
                began = time.monotonic()
                status = served.request("GET", path, timeout=10)[0]
                worst[path] = max(worst[path], time.monotonic() - began)
                assert status == 200, path
            time.sleep(0.5)
    finally:
        attack.finish()
    return worst


# 200 sockets of each kind, 1,000 idle ones (fewer only where this machine's
# own open-files limit cannot hold them)
ATTACKS = [("slow_body", 200), ("slow_reader", 200), ("slow_head", 200), ("idle", 200),
           ("idle", min(1000, resource.getrlimit(resource.RLIMIT_NOFILE)[1] - 200))]


@pytest.mark.parametrize("kind, count", ATTACKS)
def test_attacks_stall_no_one_restart_nothing_lose_nothing(served, kind, count):
    org = served.request("POST", "/organizations", {"title": "Kept"})[2]["id"]
    attack = Attack(served.port, kind, count)
    worst = _probe_under(served, attack, HOLD_SECONDS, org)
    print(f"\n{count} {kind} sockets for {HOLD_SECONDS:g} s: slowest "
          + ", ".join(f"{path} {seconds * 1000:.0f} ms" for path, seconds in worst.items())
          + f"; sockets reopened {attack.reopened}")
    assert max(worst.values()) < 1.0
    assert served.request("GET", f"/organizations/{org}")[0] == 200
    log = served.log_text()
    assert "WORKER TIMEOUT" not in log and log.count("Booting worker") == 1
    assert '"level": "error"' not in log  # no client's mistake is an error
    if kind == "slow_head" and HOLD_SECONDS > HEADER_TIMEOUT + 2:  # cut, and told why
        assert attack.answers
        _problem(attack.answers[0], 408)
    if kind == "slow_body":  # no token: refused from the head (401; 429 once the
        # address's anonymous rate is spent), the body never waited for
        assert attack.answers and all(answer[9:12] in (b"401", b"429")
                                      for answer in attack.answers)


def test_one_idle_socket_does_not_stall_the_next_request(served):
    with socket.create_connection(("127.0.0.1", served.port)):
        began = time.monotonic()
        assert served.request("GET", "/healthz")[0] == 200
        assert time.monotonic() - began < 1.0


def test_the_longest_request_line_the_document_allows_is_served(served):
    # 2,000 characters, each 4 bytes of UTF-8, percent-encoded: 24,000 bytes
    value = "\U0001F600" * (2000 - len('title=""'))
    query = urllib.parse.urlencode({"filter": f'title="{value}"', "limit": "100",
                                    "continue": "x" * 2048})
    status, _, body = served.request("GET", f"/organizations?{query}")
    assert status == 422 and body["errors"][0]["location"] == "query.continue"  # the app's answer


@pytest.mark.parametrize("request_bytes, status", [
    (b"GET /healthz?" + b"a" * 40000 + b" HTTP/1.1\r\nHost: localhost\r\n\r\n", 414),
    (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n", 431),
    (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n"
     + b"".join(b"X-%d: 1\r\n" % i for i in range(150)) + b"\r\n", 431),
    (b"NOT HTTP AT ALL\r\n\r\n", 400),
    # RFC 9112 section 6.3: chunked not last leaves the length unknown: 400
    (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
    # ...and a coding the server does not implement before it: 501 (section 6.1)
    (b"POST /organizations HTTP/1.1\r\nHost: localhost\r\n"
     b"Transfer-Encoding: gzip, chunked\r\n\r\n", 501),
    (b"GET /healthz HTTP/1.2\r\nHost: localhost\r\n\r\n", 505),
    (b"GET /healthz HTTP/2.0\r\nHost: localhost\r\n\r\n", 505),
])
def test_what_the_server_layer_refuses_is_in_the_error_format(served, request_bytes, status):
    _problem(served.raw(request_bytes), status)


def test_a_chunked_body_over_the_limit_is_413(served):
    chunk = b"x" * 65536
    body = b'{"title": "' + chunk * 20 + b'"}'
    encoded = b"".join(b"%x\r\n%s\r\n" % (len(part), part)
                       for part in (body[i:i + 65536] for i in range(0, len(body), 65536)))
    answer = served.raw(b"POST /organizations HTTP/1.1\r\nHost: localhost\r\n"
                        b"Authorization: Bearer " + TOKEN.encode() + b"\r\n"
                        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
                        b"Connection: close\r\n\r\n" + encoded + b"0\r\n\r\n", timeout=10)
    _problem(answer, 413)


def test_junk_methods_do_not_grow_the_metrics(served):
    for index in range(200):
        served.raw(f"JUNK{index} /nope{index} HTTP/1.1\r\nHost: localhost\r\n"
                   "Connection: close\r\n\r\n".encode())
    connection = http.client.HTTPConnection("127.0.0.1", served.port)
    connection.request("GET", "/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    text = connection.getresponse().read().decode()
    assert "JUNK" not in text and "/nope" not in text
    assert 'method="other"' in text and 'route="unmatched"' in text


def test_each_request_is_logged_once_by_the_service_and_not_by_gunicorn(served):
    marker = f"/organizations/org_{uuid.uuid4()}"
    assert served.request("GET", marker)[0] == 404
    time.sleep(0.2)
    lines = [json.loads(line) for line in served.log_text().splitlines()
             if line.startswith("{") and marker in line]
    assert [line["logger"] for line in lines] == ["inventory.requests"]
    assert lines[0]["status"] == 404 and lines[0]["request_id"]


AUTHORIZED = (b"Authorization: Bearer " + TOKEN.encode()
              + b"\r\nContent-Type: application/json\r\n")


def _timed(served, data, timeout=10):
    began = time.monotonic()
    answer = served.raw(data, timeout=timeout)
    return answer, time.monotonic() - began


@pytest.mark.parametrize("body, status", [
    (b"zz\r\n", 400),  # not a chunk size
    (b"2\r\n{}XX\r\n0\r\n\r\n", 400),  # a chunk without its terminator
    (b"1000000000000000000\r\nab", 413),  # 2**72 bytes announced: refused at once
])
def test_a_broken_chunked_body_is_a_clean_error_at_once(served, body, status):
    answer, took = _timed(served, b"POST /organizations HTTP/1.1\r\nHost: localhost\r\n"
                          + AUTHORIZED + b"Transfer-Encoding: chunked\r\n\r\n" + body)
    _problem(answer, status)
    assert took < 5
    assert "Traceback" not in served.log_text() and '"level": "error"' not in served.log_text()


def test_expect_100_continue_with_a_body_over_the_limit_is_413_without_continue(served):
    answer, took = _timed(served, b"POST /organizations HTTP/1.1\r\nHost: localhost\r\n"
                          + AUTHORIZED + b"Expect: 100-continue\r\nContent-Length: 2000000\r\n\r\n")
    assert b"100 Continue" not in answer
    _problem(answer, 413)


def test_expect_100_continue_is_answered_only_once_the_caller_is_authenticated(served):
    head = (b"POST /organizations HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
            b"Content-Type: application/json\r\nContent-Length: 17\r\n")
    refused = served.raw(head + b"\r\n")  # no token: 401 from the head alone
    assert b"100 Continue" not in refused and refused.startswith(b"HTTP/1.1 401 ")
    with socket.create_connection(("127.0.0.1", served.port), timeout=5) as sock:
        sock.sendall(head + b"Authorization: Bearer " + TOKEN.encode() + b"\r\n\r\n")
        assert sock.recv(100) == b"HTTP/1.1 100 Continue\r\n\r\n"
        sock.sendall(b'{"title": "Late"}')
        assert sock.recv(100).startswith(b"HTTP/1.1 201 ")


def test_a_body_that_stalls_is_408_after_the_request_deadline(served, monkeypatch):
    # a token holder's body that never ends: the deadline, then a 408 in the error format
    answer, took = _timed(served, b"POST /organizations HTTP/1.1\r\nHost: localhost\r\n"
                          + AUTHORIZED + b"Content-Length: 100\r\n\r\n{", timeout=60)
    problem = _problem(answer, 408)
    assert "did not arrive" in problem["detail"]
    assert 25 < took < 40


def test_an_absolute_form_target_names_the_host(served):
    # RFC 9112 section 3.2.2: the target's authority wins over Host
    refused = served.raw(b"GET http://evil.example/healthz HTTP/1.1\r\nHost: localhost\r\n"
                         b"Connection: close\r\n\r\n")
    problem = _problem(refused, 400)
    assert problem["errors"][0]["location"] == "header.host"
    served_answer = served.raw(b"GET http://localhost/healthz HTTP/1.1\r\nHost: evil.example\r\n"
                               b"Connection: close\r\n\r\n")
    assert served_answer.startswith(b"HTTP/1.1 200 ")
    assert b'"$schema":"http://localhost/schemas/Health.json"' in served_answer


def test_an_error_answer_to_an_unread_body_closes_the_connection(served):
    # gunicorn would otherwise read the unread body, as slowly as it comes
    answer = served.raw(b"POST /organizations HTTP/1.1\r\nHost: localhost\r\n"
                        b"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
    assert answer.startswith(b"HTTP/1.1 401 ") and b"Connection: close" in answer


def test_under_a_low_open_files_limit_the_excess_is_refused_and_the_worker_goes_on():
    # hard limit 256: at most 192 connections (64 kept for the worker's own
    # files); 400 held sockets are refused past it, with a 503, and the
    # worker neither dies nor hangs
    def low_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    server = Served(preexec_fn=low_limit)
    try:
        attack = Attack(server.port, "idle", 400)
        time.sleep(3)
        attack.finish()
        assert attack.refused, "the connections past the cap were refused with a 503"
        _problem(next(a for a in attack.answers if a.startswith(b"HTTP/1.1 503")), 503)
        time.sleep(0.5)
        began = time.monotonic()
        assert server.request("GET", "/healthz")[0] == 200
        assert time.monotonic() - began < 1.0
        log = server.log_text()
        assert "serving at most 192 connections" in log
        assert log.count("Booting worker") == 1 and "Traceback" not in log
    finally:
        server.stop()


def test_running_out_of_descriptors_pauses_accepting_and_serves_on():
    # a listener whose cap is far above what its open-files limit allows:
    # the connections it cannot take wait, and are served once others end
    process = subprocess.Popen([sys.executable, "-m", "tests.support.emfile_listener", "40"],
                               cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        port = int(process.stdout.readline())
        clients = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(80)]
        answers = []
        for client in clients:
            answers.append(client.recv(10))
            client.close()
        assert answers == [b"ok"] * 80
        assert process.poll() is None
    finally:
        process.kill()
        output = process.stdout.read()
    assert "out of file descriptors: accepting again shortly" in output
    assert "Traceback" not in output


def test_hundreds_of_idle_streams_outlive_the_answer_deadline_and_stall_no_one(served):
    # change-feed watchers: each a greenlet waiting on the feed, its answer
    # allowed to run past the 30 s deadline of ordinary answers
    org = served.request("POST", "/organizations", {"title": "Watched"})[2]["id"]
    watchers = []
    for _ in range(300):
        sock = socket.create_connection(("127.0.0.1", served.port), timeout=5)
        sock.sendall(f"GET /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                     f"{TOKEN}\r\nAccept: text/event-stream\r\n\r\n".encode())
        watchers.append(sock)
    worst = 0.0
    began = time.monotonic()
    while time.monotonic() - began < 35:
        for path in ("/healthz", f"/organizations/{org}"):
            start = time.monotonic()
            assert served.request("GET", path, timeout=10)[0] == 200
            worst = max(worst, time.monotonic() - start)
        time.sleep(0.5)
    served.request("PATCH", f"/organizations/{org}", {"title": "Seen"})
    received = b""
    watchers[0].settimeout(5)
    while b"organization.updated" not in received:
        chunk = watchers[0].recv(65536)
        assert chunk, "the stream was cut"
        received += chunk
    for sock in watchers:
        sock.close()
    assert received.startswith(b"HTTP/1.1 200 ")
    assert received.count(b": keep-alive") >= 2  # a comment every 15 s, past 30 s
    print(f"\n300 streams for 35 s: slowest probe {worst * 1000:.0f} ms")
    assert worst < 1.0
