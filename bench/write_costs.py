"""What writes cost on the embedded store as it fills, and how long each
holds the store's lock.

In process (Flask test client, request log off), on an embedded store seeded
with N organizations, platforms, clusters, scans and idempotency keys, it
times, for each N: a cluster create, a keyed scan POST (a new
`Idempotency-Key`), a scan POST, a cluster PATCH and a cluster DELETE (the
cluster has 100 scans). Medians of --reps requests (the sizes take turns,
request by request), in CPU time of the thread (others' load on the machine
does not inflate it) and wall time, and the longest time one request held
the store's lock (the lock is wrapped to measure it: from the
outermost acquire to the matching release). The requests use the bootstrap
admin token (exempt from rate limits). Writes its table to write_costs.txt
(appends with --append).

    .venv/bin/python -m bench.write_costs [--sizes 1000,10000,100000] [--reps 30]

The code measured is whatever `app` imports: run it with PYTHONPATH set to
another checkout to measure that one (the figures before a change).
"""
import argparse
import datetime
import gc
import logging
import os
import statistics
import subprocess
import time
import uuid

from app import create_app
from bench.seeding import seed
from inventory.config import Config
from inventory.core.ids import new_id
from inventory.embedded import collection, counting, database, reads, writes
from inventory.embedded import lock as embedded_lock
from inventory.embedded.lock import StoreLock
from inventory.resources.scans.store import ScanStore

ADMIN = "bench-admin-token"
OPERATIONS = ("create", "keyed POST", "scan", "PATCH", "DELETE (100 scans)")


class TimedLock(StoreLock):
    """The store's lock, keeping the longest hold since `reset`."""

    def __init__(self):
        super().__init__()
        self._since = 0.0
        self.longest = 0.0

    def acquire(self):
        super().acquire()
        if self.held_once():
            self._since = time.perf_counter()

    def release(self):
        if self.held_once():
            self.longest = max(self.longest, time.perf_counter() - self._since)
        return super().release()

    def reset(self):
        self.longest = 0.0


def install(lock):
    """`lock` in the place of the store's, in every module that holds it."""
    for module in (embedded_lock, reads, counting, writes, collection, database):
        module.LOCK = lock


def seed_keys(store, n):
    """n stored idempotency keys, written in bulk (indexes set aside)."""
    collection = store.db.idempotency
    collection.drop_indexes()
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    collection.insert_many([{"_id": f"caller:{uuid.uuid4()}", "fingerprint": "f",
                             "state": "done", "owner": "o", "created_at": now,
                             "answer": {"status": 201, "body": "{}", "headers": {}}}
                            for _ in range(n)])
    store.create_indexes()


def cluster_with_scans(store, name, scans=100):
    """A cluster with `scans` scans, written straight to the store (not timed)."""
    cluster = store.clusters.create({"name": name, "platform": "platform-00000", "title": "",
                                     "description": "", "environment": "dev",
                                     "version": "1.30.0", "labels": {}}, "bench")
    store.scans.collection.insert_many([
        {"_id": ScanStore.key(cluster["id"], 1_700_000_000 + i, scan_id), "id": scan_id,
         "cluster": cluster["id"], "scanned_on": 1_700_000_000 + i}
        for i, scan_id in ((i, new_id("k8scs")) for i in range(scans))])
    return name


class Estate:
    """An app on an embedded store seeded with n records of each kind, and
    the five timed calls against it."""

    def __init__(self, n, reps, data_dir=None):
        self.n = n
        self.app = create_app(Config(INVENTORY_ADMIN_TOKEN=ADMIN, INVENTORY_DATA_DIR=data_dir))
        store = self.app.extensions["inventory.store"]
        started = time.monotonic()
        seed(store, n)
        seed_keys(store, n)
        self.seeded = time.monotonic() - started
        self.client = self.app.test_client()
        self.client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {ADMIN}"
        self.doomed = [cluster_with_scans(store, f"doomed-{i}") for i in range(reps + 1)]
        # the seeded records as a long-running process holds them: in the
        # collector's oldest generation, not in the young ones the seeding
        # left them in (each young collection would walk them all)
        gc.collect()

    def call(self, operation, i):
        client = self.client
        if operation == "create":
            return client.post("/kubeclusters", json={
                "name": f"new-{i}", "platform": "platform-00000", "environment": "dev",
                "version": "1.30"})
        if operation == "keyed POST":
            return client.post("/kubeclusters/cluster-00001/scans", json={},
                               headers={"Idempotency-Key": str(uuid.uuid4())})
        if operation == "scan":
            return client.post("/kubeclusters/cluster-00002/scans", json={})
        if operation == "PATCH":
            return client.patch("/kubeclusters/cluster-00003", json={"labels": {"n": str(i)}})
        return client.delete(f"/kubeclusters/{self.doomed[i]}")


def measure(sizes, reps, data_dir=None):
    """{n: {operation: (median CPU ms, median wall ms, longest lock hold ms)}}.
    The sizes take turns request by request, so that a change in the
    machine's load (other processes) weighs on all of them alike; the CPU
    time is this thread's own, which others' load does not inflate."""
    lock = TimedLock()
    install(lock)
    estates = []
    for n in sizes:
        estates.append(Estate(n, reps, data_dir and os.path.join(data_dir, str(n))))
        print(f"N={n:,} seeded in {estates[-1].seeded:.1f} s", flush=True)
    results = {n: {} for n in sizes}
    for operation in OPERATIONS:
        cpu = {n: [] for n in sizes}
        wall = {n: [] for n in sizes}
        held = dict.fromkeys(sizes, 0.0)
        for estate in estates:
            estate.call(operation, reps)  # warm-up (a new name or key each time)
        for i in range(reps):
            for estate in estates:
                lock.reset()
                began, began_cpu = time.perf_counter(), time.thread_time()
                response = estate.call(operation, i)
                cpu[estate.n].append(time.thread_time() - began_cpu)
                wall[estate.n].append(time.perf_counter() - began)
                held[estate.n] = max(held[estate.n], lock.longest)
                assert response.status_code in (200, 201, 204), (operation,
                                                                 response.get_json())
        for n in sizes:
            results[n][operation] = (statistics.median(cpu[n]) * 1000,
                                     statistics.median(wall[n]) * 1000, held[n] * 1000)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--label", default="")
    parser.add_argument("--append", action="store_true")
    parser.add_argument("--data-dir", help="journal each estate's store in a directory under it")
    args = parser.parse_args()
    logging.getLogger("inventory.requests").disabled = True
    sizes = [int(s) for s in args.sizes.split(",")]
    rows = measure(sizes, args.reps, args.data_dir)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False, cwd=os.path.dirname(os.path.abspath(
                                __import__("app").__file__))).stdout.strip()
    lines = [f"## {datetime.date.today()} {args.label} (code at {commit or '?'}; medians of "
             f"{args.reps}, sizes taking turns; ms of CPU, then wall, then the longest "
             "lock hold)", "",
             "| Operation | " + " | ".join(f"N={n:,}" for n in sizes)
             + f" | CPU {sizes[-1]:,} / {sizes[0]:,} |",
             "|---|" + "---|" * (len(sizes) + 1)]
    for op in OPERATIONS:
        cells = ["{:.2f} / {:.2f} / {:.2f}".format(*rows[n][op]) for n in sizes]
        lines.append(f"| {op} | " + " | ".join(cells)
                     + f" | {rows[sizes[-1]][op][0] / rows[sizes[0]][op][0]:.2f} |")
    text = "\n".join(lines) + "\n\n"
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "write_costs.txt")
    with open(path, "a" if args.append else "w") as out:
        out.write(text)
    print(text)


if __name__ == "__main__":
    main()
