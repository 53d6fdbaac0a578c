"""How long each kind of work holds the event loop, in CPU time, in process
under gevent: robust on a shared, loaded machine, where bench/envelope.py's
wall-clock probe also counts the time the OS gave another process.

The app runs as the gevent worker runs it (everything patched), on a copy of
a data dir `flask --app app seed` wrote (made first when --estate does not
exist). A probe greenlet wakes every 5 ms; the loop thread's CPU time
between two of its wakeups is the longest stretch any other greenlet ran
without letting others run: the hold (the promise: at most 50 ms). Each
operation runs in its own greenlet, as a request would:

- a forced delete of one organization (1/K of the estate: with K=10, 10,000
  clusters and 100,000 scans at the default 100k/1M);
- a forced delete of one platform (the same size when K platforms);
- then a pass of the interrupted-delete finisher with nothing to finish;

and before those, what readiness adds: summaries by readiness.status (and
observed.minor) and by environment and version, the fleet's blockers (all,
and production's in error), the first page of clusters in error, and ten
typical observed scans; with the start-up (importing the app, the data
dir read) and the process's peak RSS.

    .venv/bin/python -m bench.loop_holds [--estate /tmp/estate10] [--clusters 100000]
        [--scans-per-cluster 10] [--organizations 10]

Appends its table to bench/loop_holds.txt.
"""
from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import datetime  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402

from bench import estates  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = "bench-loop-holds-admin-token-0123456789"
PROMISE_MS = 50


class Probe:
    """Wakes every 5 ms; keeps the loop thread's CPU time between wakeups."""

    def __init__(self):
        self.samples, self.running = [], True
        self.greenlet = gevent.spawn(self.run)

    def run(self):
        last_cpu, last_wall = time.thread_time(), time.monotonic()
        while self.running:
            gevent.sleep(0.005)
            cpu, wall = time.thread_time(), time.monotonic()
            self.samples.append((wall, (cpu - last_cpu) * 1000, (wall - last_wall) * 1000))
            last_cpu, last_wall = cpu, wall

    def worst(self, start, end):
        """(CPU ms, wall ms) of the longest stretch that ended in [start, end]."""
        inside = [(cpu, wall) for at, cpu, wall in self.samples if start <= at <= end]
        return max(inside, default=(0.0, 0.0))


def main():
    parser = argparse.ArgumentParser()
    estates.add_arguments(parser, "/tmp/estate10", 100_000)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "loop_holds.txt"))
    args = parser.parse_args()
    work, data = estates.copied(args, "loop-holds-")
    os.environ.update(INVENTORY_DATA_DIR=data, INVENTORY_ADMIN_TOKEN=ADMIN)
    sys.path.insert(0, ROOT)
    started = time.monotonic()
    from app import app  # the module's app: made from the environment, as gunicorn's is
    start_up = time.monotonic() - started
    import resource
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    from inventory.cli.seed import typical_scan

    client = app.test_client()
    headers = {"Authorization": f"Bearer {ADMIN}"}
    store = app.extensions["inventory.store"]
    orgs = client.get("/organizations?limit=3", headers=headers).get_json()["results"]
    platforms = client.get(f'/kubeplatforms?limit=1&filter=organization="{orgs[1]["id"]}"',
                           headers=headers).get_json()["results"]
    probe = Probe()
    gevent.sleep(0.5)
    rows = []

    def held(name, action):
        gevent.sleep(0.2)
        start = time.monotonic()
        outcome = gevent.spawn(action).get()
        took = time.monotonic() - start
        gevent.sleep(0.05)
        cpu, wall = probe.worst(start, time.monotonic())
        rows.append((name, cpu, wall, f"{outcome} in {took:.1f} s"))

    def get(path):
        return lambda: client.get(path, headers=headers).status_code

    cluster = client.get("/kubeclusters?limit=1", headers=headers).get_json()["results"][0]
    held("summary by readiness.status", get("/kubeclusters:summary?group_by=readiness.status"))
    held("summary by readiness.status, observed.minor",
         get("/kubeclusters:summary?group_by=readiness.status,observed.minor"))
    held("summary by environment, version", get("/kubeclusters:summary?group_by="
                                                 "environment,version"))
    held("the fleet's blockers (:blockers)", get("/kubeclusters:blockers"))
    held("blockers of production clusters in error", get(
        '/kubeclusters:blockers?filter=environment="production" AND readiness.status="error"'))
    held("first page of clusters whose readiness is error",
         get('/kubeclusters?limit=20&filter=readiness.status="error"'))
    held("10 typical observed scans into a cluster", lambda: [client.post(
        f"/kubeclusters/{cluster['name']}/scans", json=typical_scan("1.30.4", n),
        headers=headers).status_code for n in range(10)][-1])
    held("forced delete of an organization (1/K of the estate)", lambda: client.delete(
        f"/organizations/{orgs[0]['id']}?force=true", headers=headers).status_code)
    held("forced delete of a platform (1/K of the estate)", lambda: client.delete(
        f"/kubeplatforms/{platforms[0]['name']}?force=true", headers=headers).status_code)
    held("the finisher's look, nothing to finish",
         lambda: len(store.finish_interrupted_deletes()))
    probe.running = False
    store.db.journal.close()
    shutil.rmtree(work, ignore_errors=True)
    lines = [f"# python -m bench.loop_holds  ({datetime.datetime.now():%Y-%m-%d %H:%M}, "
             f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; estate {args.estate}: "
             f"{args.clusters:,} clusters, {args.clusters * args.scans_per_cluster:,} scans, "
             f"{args.organizations:,} organizations)",
             f"start-up in process {start_up:.1f} s (10 s promised); peak RSS "
             f"{rss_mb:,.0f} MB",
             f"promise: no hold over {PROMISE_MS} ms of the loop's CPU",
             f"{'what':<56}{'CPU ms':>8}{'wall ms':>9}  outcome"]
    for name, cpu, wall, outcome in rows:
        over = "  OVER" if cpu > PROMISE_MS else ""
        lines.append(f"{name:<56}{cpu:>8.1f}{wall:>9.1f}  {outcome}{over}")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n")


if __name__ == "__main__":
    main()
