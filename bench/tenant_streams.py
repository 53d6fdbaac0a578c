"""One tenant's streams against another tenant's writes and reads
(docs/design/envelope.md, "Per tenant, not only per token").

Served as the Procfile serves it (gunicorn.conf.py, the gevent worker, one
process, the embedded store). Organization B writes (a scan's POST, back to
back on one kept-alive connection) and reads (a GET of its cluster every
20 ms on another), first alone, then while organization A holds --streams
Server-Sent Events streams open (--tokens reader tokens of A, the streams
spread over them) and writes one event into its own feed every 0.1 s, so
that A's streams have something to wake for. It prints B's write rate, the
worker's CPU time per write, and B's GET p50/p99 in both phases, with the
ratios (the promise: writes >= 0.7x, GET p50 <= 2x), how A's stream
requests were answered (all 200: past its share of the process's streams
and waits, each newcomer ends the oldest of its token's, else of A's, and
is never refused), and how many still stream at the end (A's share; the
others ended, each after the comment `: ended: ...`). Rate limits are raised for the run (RATE_LIMIT,
RATE_LIMIT_ORGANIZATION) so that B's rate measures capacity, not its quota.

    .venv/bin/python -m bench.tenant_streams [--streams 400] [--tokens 100] [--seconds 10]

Appends its report to bench/tenant_streams.txt.
"""
import argparse
import datetime
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from bench.run import GUNICORN, ROOT, free_ports
from bench.run import call as run_call

ADMIN = "bench-tenant-streams-admin"


def call(port, method, path, body=None, token=ADMIN):
    """The answer's JSON (None when empty); any status past 2xx ends the bench."""
    status, data = run_call(port, method, path, None if body is None else json.dumps(body),
                            token=token)
    if status >= 300:
        raise SystemExit(f"{method} {path}: {status} {data[:300]!r}")
    return json.loads(data) if data else None


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def worker_of(master):
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        children = open(f"/proc/{master}/task/{master}/children").read().split()
        if len(children) == 1:
            return int(children[0])
        time.sleep(0.05)
    raise SystemExit("no worker")


class Loop(threading.Thread):
    """`method path` on one kept-alive connection until stopped, every
    `every` seconds (0: back to back): latencies in ms, and statuses."""

    def __init__(self, port, token, method, path, body=None, every=0.0):
        super().__init__(daemon=True)
        self.port, self.token, self.method, self.path = port, token, method, path
        self.body, self.every = body, every
        self.ms, self.statuses, self.stopping = [], {}, threading.Event()

    def run(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        body = None if self.body is None else json.dumps(self.body)
        while not self.stopping.is_set():
            started = time.monotonic()
            connection.request(self.method, self.path, body=body, headers=headers)
            response = connection.getresponse()
            response.read()
            self.ms.append((time.monotonic() - started) * 1000)
            self.statuses[response.status] = self.statuses.get(response.status, 0) + 1
            if self.every:
                time.sleep(max(0.0, self.every - (time.monotonic() - started)))


def phase(port, worker, b_token, b_cluster, seconds):
    writes = Loop(port, b_token, "POST", f"/kubeclusters/{b_cluster}/scans", {})
    reads = Loop(port, b_token, "GET", f"/kubeclusters/{b_cluster}", every=0.02)
    cpu = cpu_seconds(worker)
    for loop in (writes, reads):
        loop.start()
    time.sleep(seconds)
    for loop in (writes, reads):
        loop.stopping.set()
    for loop in (writes, reads):
        loop.join()
    cpu = cpu_seconds(worker) - cpu
    done = writes.statuses.get(201, 0)
    return {"rate": done / seconds, "cpu_ms": cpu * 1000 / max(done, 1),
            "p50": statistics.median(reads.ms), "p99": statistics.quantiles(reads.ms, n=100)[98],
            "statuses": {**writes.statuses}, "read_statuses": {**reads.statuses}}


def open_streams(port, tokens, count):
    sockets = []
    for i in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall((f"GET /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                      f"{tokens[i % len(tokens)]}\r\nAccept: text/event-stream\r\n\r\n").encode())
        sockets.append(sock)
    time.sleep(3)
    statuses = {}
    for sock in sockets:
        sock.settimeout(5)
        try:
            status = sock.recv(64).split(b" ", 2)[1].decode()
        except (OSError, IndexError):
            status = "none"
        statuses[status] = statuses.get(status, 0) + 1
    return sockets, statuses


def still_streaming(sockets):
    """How many of `sockets` are open, their stream not ended."""
    count = 0
    for sock in sockets:
        received, closed = b"", False
        sock.settimeout(0.05)
        try:
            while chunk := sock.recv(65536):
                received += chunk
            closed = True
        except TimeoutError:
            pass
        except OSError:
            closed = True
        count += not closed and b": ended:" not in received
    return count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--streams", type=int, default=400)
    parser.add_argument("--tokens", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "tenant_streams.txt"))
    parser.add_argument("--port", type=int, default=0, help="serve on it (else a free one)")
    args = parser.parse_args()
    port = args.port or free_ports(1)[0]
    data = tempfile.mkdtemp(prefix="tenant-streams-")
    env = {**os.environ, "PORT": str(port), "WEB_CONCURRENCY": "1", "INVENTORY_DATA_DIR": data,
           "INVENTORY_ADMIN_TOKEN": ADMIN, "RATE_LIMIT": "1000000 per minute",
           "RATE_LIMIT_ORGANIZATION": "1000000 per minute"}
    env.pop("MONGODB_URI", None)
    master = subprocess.Popen([GUNICORN, "-c", os.path.join(ROOT, "gunicorn.conf.py"), "app:app"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    sockets = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                call(port, "GET", "/healthz")
                break
            except (OSError, SystemExit):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        worker = worker_of(master.pid)
        orgs = [call(port, "POST", "/organizations", {"title": t, "description": ""})["id"]
                for t in ("tenant A", "tenant B")]
        call(port, "PATCH", f"/organizations/{orgs[0]}", {"quotas": {"tokens": args.tokens + 1}})
        clusters = []
        for org, name in zip(orgs, ("a", "b")):
            call(port, "POST", "/kubeplatforms", {
                "name": f"platform-{name}", "organization": org, "title": "", "description": "",
                "control_plane": {"provider": "eks"},
                "infrastructure": {"cloud": {"provider": "aws"}}})
            clusters.append(call(port, "POST", "/kubeclusters", {
                "name": f"cluster-{name}", "platform": f"platform-{name}",
                "environment": "production", "version": "1.31.0"})["name"])
        b_token = call(port, "POST", "/tokens", {"name": "b-writer", "role": "writer",
                                                 "organization": orgs[1]})["token"]
        a_writer = call(port, "POST", "/tokens", {"name": "a-writer", "role": "writer",
                                                  "organization": orgs[0]})["token"]
        a_tokens = [call(port, "POST", "/tokens", {"name": f"a-reader-{i}", "role": "reader",
                                                   "organization": orgs[0]})["token"]
                    for i in range(args.tokens)]
        phase(port, worker, b_token, clusters[1], 2)  # warm-up
        alone = phase(port, worker, b_token, clusters[1], args.seconds)
        sockets, stream_statuses = open_streams(port, a_tokens, args.streams)
        a_events = Loop(port, a_writer, "POST", f"/kubeclusters/{clusters[0]}/scans", {},
                        every=0.1)
        a_events.start()
        loaded = phase(port, worker, b_token, clusters[1], args.seconds)
        a_events.stopping.set()
        a_events.join()
        streaming = still_streaming(sockets)
    finally:
        for sock in sockets:
            sock.close()
        master.terminate()
        master.wait(timeout=60)
    write_ratio, p50_ratio = loaded["rate"] / alone["rate"], loaded["p50"] / alone["p50"]
    lines = [
        f"# python -m bench.tenant_streams --streams {args.streams} --tokens {args.tokens} "
        f"--seconds {args.seconds:g}  ({datetime.datetime.now():%Y-%m-%d %H:%M}, "
        f"{os.cpu_count()} cores, python {sys.version.split()[0]}, load "
        f"{os.getloadavg()[0]:.1f})",
        f"A's {args.streams} stream requests over {args.tokens} tokens: {stream_statuses}, "
        f"{streaming} still streaming at the end (the others ended for newer ones past A's "
        f"share); A writes an event every 0.1 s ({a_events.statuses})",
        f"{'B':<22} {'writes/s':>9} {'CPU ms/write':>13} {'GET p50 ms':>11} {'GET p99 ms':>11}",
    ]
    for name, figures in (("alone", alone), ("with A's streams", loaded)):
        lines.append(f"{name:<22} {figures['rate']:9.0f} {figures['cpu_ms']:13.2f} "
                     f"{figures['p50']:11.2f} {figures['p99']:11.2f}")
    lines.append(f"writes {write_ratio:.2f}x ({'within' if write_ratio >= 0.7 else 'BELOW'} "
                 f"the 0.7x promise); GET p50 {p50_ratio:.2f}x "
                 f"({'within' if p50_ratio <= 2 else 'OVER'} the 2x promise)")
    text = "\n".join(lines)
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n\n")


if __name__ == "__main__":
    main()
