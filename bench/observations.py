"""What observations cost: a typical observed scan's POST against a plain
scan's, and a page of clusters (with `observed` and `readiness`) against
the same page before them, in the same run.

1. Scan POSTs, journaled: an embedded store with a data dir (fsync as
   configured), in process (Flask test client, request log off), clusters
   made through the API; a plain scan (`{}`) and a typical agent's scan
   (`inventory.cli.seed.typical_scan`: a dozen nodes on a few kubelet
   versions, a handful of deprecated APIs, some findings), each with its
   own `Idempotency-Key`, taking turns request by request, into clusters
   taken in turn, each body made and encoded before its request is timed
   (that is the client's work). Medians of wall time and of the thread's CPU time; the
   rates are 1 / the median wall time.
2. A page of 20 clusters (`GET /kubeclusters?limit=20`, pages of the whole
   walk, then again), on an in-memory store seeded by `flask seed`'s
   estate (each cluster's newest scan observed, here), in a child process
   of this checkout and one of `--base` (a checkout of the code before
   observations: `git archive <commit> | tar -x -C DIR`), the two taking
   turns for --rounds rounds. The figures are the medians of each
   process's page times; the ratio is before / after (1.0: as fast).

    .venv/bin/python -m bench.observations --base /tmp/obs-base [--clusters 2000]
        [--reps 300] [--rounds 3]

Appends its table to bench/observations.txt.
"""
import argparse
import datetime
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = "bench-observations-admin-token"

# The child that times list pages: only what both checkouts have.
PAGES = r"""
import json, logging, statistics, sys, time
from app import create_app
from inventory.config import Config
from inventory.cli.seed import estate
from inventory.store import get_store
logging.disable(logging.INFO)
clusters, walks = int(sys.argv[1]), int(sys.argv[2])
app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN="t" * 40))
with app.app_context():
    store = get_store()
    for name, batch in estate(store, clusters, 2, max(1, clusters // 100), "bench"):
        store.db[name].insert_many(batch, ordered=True)
client = app.test_client()
headers = {"Authorization": "Bearer " + "t" * 40}
times, size = [], 0
for _ in range(walks):
    token = ""
    while True:
        started = time.perf_counter()
        answer = client.get("/kubeclusters?limit=20" + ("&continue=" + token if token else ""),
                            headers=headers)
        times.append((time.perf_counter() - started) * 1000)
        page = answer.get_json()
        size = max(size, len(answer.get_data()))
        token = page["pagination"]["continue"]
        if not token:
            break
print(json.dumps({"median_ms": statistics.median(times), "pages": len(times),
                  "bytes": size}))
"""


def pages_of(checkout, clusters, walks):
    env = {**os.environ, "PYTHONPATH": checkout}
    env.pop("MONGODB_URI", None)
    env.pop("INVENTORY_DATA_DIR", None)
    out = subprocess.run([sys.executable, "-c", PAGES, str(clusters), str(walks)], cwd=checkout,
                         env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def scan_posts(clusters, reps):
    from app import create_app
    from inventory.cli.seed import typical_scan
    from inventory.config import Config

    logging.disable(logging.INFO)
    work = tempfile.mkdtemp(prefix="bench-observations-")
    app = create_app(Config(INVENTORY_DATA_DIR=os.path.join(work, "data"),
                            INVENTORY_ADMIN_TOKEN=ADMIN, TESTING=True))
    client = app.test_client()
    headers = {"Authorization": f"Bearer {ADMIN}"}

    def post(path, body):
        answer = client.post(path, json=body, headers=headers)
        assert answer.status_code == 201, answer.get_json()
        return answer.get_json()
    org = post("/organizations", {"title": "bench"})["id"]
    post("/kubeplatforms", {"name": "bench", "organization": org,
                            "control_plane": {"provider": "eks"},
                            "infrastructure": {"cloud": {"provider": "aws"}}})
    names = [post("/kubeclusters", {"name": f"c{i:04d}", "platform": "bench",
                                    "environment": "production", "version": "1.30.4"})["name"]
             for i in range(clusters)]
    # each cluster's agent posts what its cluster is (the same variant each
    # time, as a fleet's agents do between changes)
    bodies = {"plain": lambda n: {"scanned_on": 1_700_000_000 + n},
              "observed": lambda n: {"scanned_on": 1_700_000_000 + n,
                                     **typical_scan("1.30.4", n % clusters)}}
    timed = {kind: ([], []) for kind in bodies}
    size = len(json.dumps(bodies["observed"](0)))
    for n in range(reps + 20):  # the first 20 of each warm up
        for kind, body in bodies.items():
            name = names[n % clusters]
            # what the client does (making and encoding the body) is not timed
            sent = json.dumps(body(n)).encode()
            request_headers = {**headers, "Idempotency-Key": str(uuid.uuid4())}
            wall, cpu = time.perf_counter(), time.thread_time()
            answer = client.post(f"/kubeclusters/{name}/scans", data=sent,
                                 content_type="application/json", headers=request_headers)
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            assert answer.status_code == 201, answer.get_json()
            if n >= 20:
                timed[kind][0].append(wall * 1000)
                timed[kind][1].append(cpu * 1000)
    fsync = app.config.get("INVENTORY_FSYNC", "default")
    app.extensions["inventory.store"].db.journal.close()
    shutil.rmtree(work, ignore_errors=True)
    return {kind: (statistics.median(walls), statistics.median(cpus))
            for kind, (walls, cpus) in timed.items()}, size, fsync


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="a checkout of the code before")
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--walks", type=int, default=2)
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "observations.txt"))
    args = parser.parse_args()
    rates, size, fsync = scan_posts(50, args.reps)
    before, after = [], []
    for _ in range(args.rounds):
        before.append(pages_of(args.base, args.clusters, args.walks))
        after.append(pages_of(ROOT, args.clusters, args.walks))
    plain_ms, observed_ms = rates["plain"][0], rates["observed"][0]
    page_before = statistics.median(r["median_ms"] for r in before)
    page_after = statistics.median(r["median_ms"] for r in after)
    lines = [
        f"# python -m bench.observations  ({datetime.datetime.now():%Y-%m-%d %H:%M}, "
        f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {args.reps} POSTs of each, "
        f"journaled (INVENTORY_FSYNC {fsync}); pages of {args.clusters:,} clusters, "
        f"{args.rounds} rounds; base {args.base})",
        f"{'what':<52} {'wall ms':>8} {'CPU ms':>7} {'per s':>7}",
        f"{'scan POST, plain':<52} {plain_ms:8.2f} {rates['plain'][1]:7.2f} "
        f"{1000 / plain_ms:7.0f}",
        f"{f'scan POST, typical observed ({size:,} bytes)':<52} {observed_ms:8.2f} "
        f"{rates['observed'][1]:7.2f} {1000 / observed_ms:7.0f}",
        f"observed / plain rate: {plain_ms / observed_ms:.2f}x by wall time, "
        f"{rates['plain'][1] / rates['observed'][1]:.2f}x by CPU time (wanted >= 0.8x)",
        f"{'page of 20 clusters, before (base)':<52} {page_before:8.2f}   "
        f"({before[0]['bytes']:,} bytes a page; rounds "
        + ", ".join(f"{r['median_ms']:.2f}" for r in before) + ")",
        f"{'page of 20 clusters, with observed and readiness':<52} {page_after:8.2f}   "
        f"({after[0]['bytes']:,} bytes a page; rounds "
        + ", ".join(f"{r['median_ms']:.2f}" for r in after) + ")",
        f"page rate, after / before: {page_before / page_after:.2f}x (wanted >= 0.9x)",
    ]
    text = "\n".join(lines)
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n\n")


if __name__ == "__main__":
    main()
