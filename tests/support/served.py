"""The app served over real HTTP, for the served tests and the benches:
`call` sends one JSON request on its own connection; `Gunicorn` runs the
app as the Procfile does (gunicorn.conf.py, the gevent worker) on a free
port, on the embedded store."""
import http.client
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
from typing import Any, NamedTuple

ROOT = pathlib.Path(__file__).resolve().parents[2]


class Answer(NamedTuple):
    status: int
    headers: Any
    body: Any  # the JSON body, or None when empty


def call(port, method, path, body=None, headers=None, token=None, timeout=30):
    """One request with a JSON body (if any) and a bearer token (if any)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    sent = {"Content-Type": "application/json", **(headers or {})}
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body),
                           headers=sent)
        response = connection.getresponse()
        data = response.read()
        return Answer(response.status, response.headers, json.loads(data) if data else None)
    finally:
        connection.close()


def environment_of(config):
    """The environment variables that give a served process the settings
    of `config` (an inventory.config.Config) where they differ from what it
    would read from this environment; ValueError for an override that no
    declared setting carries."""
    from inventory.config import SETTINGS, Config

    inherited, variables = Config(), {}
    declared = {setting.attribute or setting.name: setting for setting in SETTINGS}
    for attribute, value in vars(config).items():
        if value == getattr(inherited, attribute, None) or attribute == "TESTING":
            continue
        if attribute not in declared:
            raise ValueError(f"{attribute} is not a setting: a served process cannot be "
                             "given it")
        if isinstance(value, bool):
            text = "1" if value else "0"
        elif isinstance(value, (list, tuple)):
            text = ",".join(value)
        else:
            text = str(value)
        variables[declared[attribute].name] = text
    return variables


_HANDED_OUT = set()  # of TEST_PORTS, by this process


def free_port():
    """A port nothing listens on: one of TEST_PORTS (`9100-9199`: a shared
    machine's share) when that is set, else any the system gives."""
    first, _, last = os.environ.get("TEST_PORTS", "0").partition("-")
    for port in range(int(first), int(last or first) + 1):
        if port in _HANDED_OUT:  # free still, but perhaps not for long
            continue
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            port = probe.getsockname()[1]
        if port:  # TEST_PORTS' (the system's own are not given twice at once)
            _HANDED_OUT.add(port)
        return port
    raise RuntimeError(f"no free port in TEST_PORTS={os.environ['TEST_PORTS']}")


def children(pid):
    with open(f"/proc/{pid}/task/{pid}/children") as listing:
        return [int(child) for child in listing.read().split()]


class Gunicorn:
    """gunicorn with gunicorn.conf.py on a free port, on the embedded store,
    with `token` as INVENTORY_ADMIN_TOKEN; `env` adds to the environment,
    `log` is a path for its output, `{port}` in it the port (else the output
    is dropped); `port`: that one rather than a free one."""

    def __init__(self, token, env=None, log=None, preexec_fn=None, ready="/healthz",
                 timeout=60, port=None):
        self.port, self.token = port or free_port(), token
        # on the embedded store unless `env` names a MONGODB_URI itself
        environment = {**os.environ, "PORT": str(self.port), "INVENTORY_ADMIN_TOKEN": token,
                       "WEB_CONCURRENCY": "1"}
        environment.pop("MONGODB_URI", None)
        environment.update(env or {})
        self.log = open(str(log).format(port=self.port), "w+") if log is not None else None
        output = self.log if self.log is not None else subprocess.DEVNULL
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "app:app"], cwd=ROOT, env=environment,
            stdout=output, stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
        self.wait_ready(ready, timeout)

    def request(self, method, path, body=None, headers=None, token=None, timeout=10):
        return call(self.port, method, path, body, headers, token or self.token, timeout)

    def raw(self, data, timeout=5):
        """Send raw bytes; the whole answer, until the server closes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(data)
            chunks = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)

    def wait_ready(self, path="/readyz", timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.request("GET", path, timeout=5).status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.1)
        text = self.log_text() if self.log is not None else ""
        self.stop()
        raise RuntimeError("gunicorn did not become ready:\n" + text)

    def worker(self):
        """The process id of its one worker."""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            workers = children(self.process.pid)
            if len(workers) == 1:
                return workers[0]
            time.sleep(0.05)
        raise RuntimeError(f"workers: {children(self.process.pid)}")

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def stop(self, quick=False):
        """Stop it: gracefully (SIGTERM), or `quick` (SIGQUIT: gunicorn ends
        its workers at once, as a test's teardown can)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGQUIT if quick else signal.SIGTERM)
        self.process.wait(timeout=60)
        if self.log is not None and not self.log.closed:
            self.log.close()
