"""Fairness: one token's costly pages against everyone else's GETs.

The requirement (issue 18): with four loops of the costliest legal filter
from one reader token, other tokens' GETs stay within 2x of their unloaded
p50. Served as the Procfile serves it (gunicorn.conf.py, the gevent worker,
one process, the embedded store seeded with --n clusters: bench/seeded_app.py),
with the default rate and concurrency limits.

Two other reader tokens each loop, on one kept-alive connection, over a read
of one cluster and a page of 20 clusters, a GET every --every seconds (well
within their rate limit, so that all they measure is waiting): first alone
(unloaded), then while
four threads of a third reader token loop GET /kubeclusters?limit=100 with
the costliest filter of bench/filter_cost.py. It prints p50 and p99 of the
others' GETs in both phases, their ratio, and how many costly pages were
answered (and with what statuses), and appends the table to --out.

    .venv/bin/python -m bench.fairness [--n 10000] [--seconds 20]
"""
import argparse
import collections
import datetime
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from urllib.parse import urlencode

from bench.filter_cost import CANDIDATES, revision
from bench.run import call, free_ports, start, stop

COSTLIEST = "16 OR labels.team!= prefix"  # bench/filter_cost.txt's costliest
TARGET = 2.0
ADMIN = "bench-fairness-admin-token"


def make_token(port, name):
    status, body = call(port, "POST", "/tokens", json.dumps({"name": name, "role": "reader"}),
                        token=ADMIN)
    if status != 201:
        raise SystemExit(f"token {name}: {status} {body[:300]!r}")
    return json.loads(body)["token"]


class Loop(threading.Thread):
    """GETs of `paths` in turn on one kept-alive connection until stopped:
    the latency (s) and status of each."""

    def __init__(self, port, token, paths, every=0.0):
        super().__init__(daemon=True)
        self.port, self.token, self.paths, self.every = port, token, paths, every
        self.latencies, self.statuses = [], collections.Counter()
        self.stopping = threading.Event()

    def run(self):
        connection, turn = None, 0
        while not self.stopping.is_set():
            if connection is None:
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            path = self.paths[turn % len(self.paths)]
            turn += 1
            began = time.perf_counter()
            try:
                connection.request("GET", path, headers={"Authorization": f"Bearer {self.token}"})
                response = connection.getresponse()
                response.read()
            except (OSError, http.client.HTTPException):
                connection.close()
                connection = None
                self.statuses["error"] += 1
                continue
            self.latencies.append(time.perf_counter() - began)
            self.statuses[response.status] += 1
            self.stopping.wait(max(0.0, self.every - (time.perf_counter() - began)))
            if response.status == 429:  # as a client should: wait as told
                time.sleep(float(response.getheader("Retry-After") or 1))
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                connection = None
        if connection is not None:
            connection.close()

    def finish(self):
        self.stopping.set()
        self.join()


def run_phase(loops, seconds):
    for loop in loops:
        loop.start()
    time.sleep(seconds)
    for loop in loops:
        loop.finish()


def quantiles(latencies):
    cuts = statistics.quantiles(latencies, n=100)
    return cuts[49] * 1000, cuts[98] * 1000


def statuses(loops):
    counted = sum((loop.statuses for loop in loops), collections.Counter())
    return "statuses " + ", ".join(f"{status}: {n}" for status, n in sorted(counted.items(), key=str))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--costly-loops", type=int, default=4)
    parser.add_argument("--every", type=float, default=0.05)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "fairness.txt"))
    args = parser.parse_args()
    port = free_ports(1)[0]
    with tempfile.TemporaryDirectory() as workdir:
        server = start("bench.seeded_app:app", port, {
            "BENCH_N": str(args.n), "BENCH_STATE_FILE": os.path.join(workdir, "state.json"),
            "INVENTORY_ADMIN_TOKEN": ADMIN, "INVENTORY_DATA_DIR": "", "LOG_LEVEL": "WARNING"})
        try:
            costly, *others = (make_token(port, name) for name in ("costly", "other-1", "other-2"))
            paths = ["/kubeclusters/cluster-00042", "/kubeclusters?limit=20"]
            costly_path = "/kubeclusters?" + urlencode({"limit": 100,
                                                        "filter": CANDIDATES[COSTLIEST]})
            for token in [costly, *others]:  # warm: the sorted keys, the matcher
                call(port, "GET", costly_path, token=token)
            unloaded = [Loop(port, token, paths, args.every) for token in others]
            run_phase(unloaded, args.seconds)
            attackers = [Loop(port, costly, [costly_path]) for _ in range(args.costly_loops)]
            loaded = [Loop(port, token, paths, args.every) for token in others]
            run_phase(attackers + loaded, args.seconds)
        finally:
            stop([server])
    base = quantiles([s for loop in unloaded for s in loop.latencies])
    under = quantiles([s for loop in loaded for s in loop.latencies])
    costly_p50 = statistics.median(s for loop in attackers for s in loop.latencies) * 1000
    ratio = under[0] / base[0]
    lines = [
        f"# python -m bench.fairness --n {args.n} --seconds {args.seconds:g}  "
        f"({datetime.date.today()}; nproc {len(os.sched_getaffinity(0))}; "
        f"python {sys.version.split()[0]}; {revision()}; load average "
        f"{os.getloadavg()[0]:.1f})",
        f"others' GETs (2 tokens, {' and '.join(paths)}): p50 / p99 ms",
        f"  unloaded:  {base[0]:7.1f} / {base[1]:7.1f}   {statuses(unloaded)}",
        f"  under {args.costly_loops} loops of '{COSTLIEST}':",
        f"             {under[0]:7.1f} / {under[1]:7.1f}   {statuses(loaded)}",
        f"  costly pages: p50 {costly_p50:.0f} ms   {statuses(attackers)}",
        f"p50 ratio {ratio:.2f}: {'within' if ratio <= TARGET else 'OVER'} the {TARGET:g}x target",
    ]
    print("\n".join(lines))
    with open(args.out, "a") as out:
        out.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
