"""The serving model, under gunicorn exactly as the Procfile runs it: idle,
slow and malformed connections stall no one, restart nothing, lose nothing,
and whatever the server layer refuses answers in the error format."""
import http.client
import json
import os
import pathlib
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import uuid

import pytest

from inventory.serving import HEADER_TIMEOUT

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOKEN = "serving-test-token"
# How long the attack in test_idle_and_slow_sockets_stall_no_one lasts; the
# issue that asked for it says 60 s. Shorter for a quick local run.
HOLD_SECONDS = float(os.environ.get("SERVING_HOLD_SECONDS", "60"))

pytestmark = pytest.mark.slow


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """gunicorn with gunicorn.conf.py on a free port, on the embedded store."""

    def __init__(self):
        self.port = _free_port()
        env = {**os.environ, "PORT": str(self.port), "INVENTORY_ADMIN_TOKEN": TOKEN,
               "WEB_CONCURRENCY": "1"}
        env.pop("MONGODB_URI", None)
        self.log = open(ROOT / ".venv" / f"gunicorn-test-{self.port}.log", "w+")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "app:app"], cwd=ROOT, env=env,
            stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("gunicorn did not start")

    def request(self, method, path, body=None, timeout=5):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=None if body is None else json.dumps(body),
                               headers={"Authorization": f"Bearer {TOKEN}",
                                        "Content-Type": "application/json"})
            response = connection.getresponse()
            data = response.read()
            return response.status, response.headers, json.loads(data) if data else None
        finally:
            connection.close()

    def raw(self, data, timeout=5):
        """Send raw bytes; the whole answer, until the server closes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(data)
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


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


class Attacker:
    """Holds `idle` connections that send nothing and `slow` ones that send a
    request head a line at a time, every `pause` seconds, never finishing it.
    A connection the server closes is opened again at once."""

    def __init__(self, port, idle, slow, pause=2.0):
        self.port, self.pause = port, pause
        self.stop = threading.Event()
        self.reopened = {"idle": 0, "slow": 0}
        self.timeouts = []  # the 408 answers received
        self.threads = [threading.Thread(target=self._idle) for _ in range(idle)]
        self.threads += [threading.Thread(target=self._slow) for _ in range(slow)]
        for thread in self.threads:
            thread.start()

    def _connect(self):
        return socket.create_connection(("127.0.0.1", self.port), timeout=HEADER_TIMEOUT + 30)

    def _idle(self):
        while not self.stop.is_set():
            with self._connect() as sock:
                sock.settimeout(0.5)
                while not self.stop.is_set():
                    try:
                        if sock.recv(4096) == b"":
                            break  # closed by the server: connect again
                    except socket.timeout:
                        continue
                    except OSError:
                        break
            self.reopened["idle"] += 1

    def _slow(self):
        while not self.stop.is_set():
            with self._connect() as sock:
                try:
                    sock.sendall(b"GET /organizations HTTP/1.1\r\nHost: localhost\r\n")
                    line = 0
                    while not self.stop.wait(self.pause):
                        line += 1
                        sock.sendall(f"X-Slow-{line}: {line}\r\n".encode())
                except OSError:  # cut by the server: read what it said
                    sock.settimeout(1)
                    try:
                        self.timeouts.append(sock.recv(65536))
                    except OSError:
                        pass
            self.reopened["slow"] += 1

    def finish(self):
        self.stop.set()
        for thread in self.threads:
            thread.join()


def test_idle_and_slow_sockets_stall_no_one(served):
    org = served.request("POST", "/organizations", {"title": "Kept"})[2]["id"]
    attacker = Attacker(served.port, idle=4, slow=4)
    worst, probes = 0.0, 0
    try:
        started = time.monotonic()
        while time.monotonic() - started < HOLD_SECONDS:
            for path in ("/healthz", f"/organizations/{org}", "/kubeclusters?limit=5"):
                began = time.monotonic()
                status = served.request("GET", path, timeout=5)[0]
                worst = max(worst, time.monotonic() - began)
                probes += 1
                assert status == 200, path
            time.sleep(0.5)
    finally:
        attacker.finish()
    print(f"\n{probes} probes over {HOLD_SECONDS:g} s under 4 idle and 4 slow sockets: "
          f"slowest {worst * 1000:.0f} ms; reopened {attacker.reopened}")
    assert worst < 1.0
    # nothing restarted, nothing lost
    assert served.request("GET", f"/organizations/{org}")[0] == 200
    assert "WORKER TIMEOUT" not in served.log_text()
    assert "Booting worker" in served.log_text() and served.log_text().count("Booting worker") == 1
    if HOLD_SECONDS > HEADER_TIMEOUT + 2:  # the slow heads were cut, and told why
        assert attacker.timeouts
        _problem(attacker.timeouts[0], 408)


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
    (b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
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
