"""What the embedded store's journal costs (inventory/embedded/journal.py).

Start-up: a data directory holding N clusters (with their organizations and
platforms) and M scans, as a compacted snapshot, and as a journal of one
line per record with no snapshot (what a store that never compacted would
replay; the most a start replays before compaction is a snapshot and a
journal as large as it, about the two added). Each is started in a fresh
process: the replay alone (Journal.open), then the whole app (create_app:
replay, the start-up index pass, the signing key). Compaction: how long the
store's lock is held to start it (fsync, new segment, fork) and how long
the child takes to write the snapshot; the same for the snapshot a fault
(the segment truncated under the process) makes it write. (A start from a
journal larger than the compaction threshold also starts a compaction,
whose child then shares the two cores with the rest of the start.)

Writes: in process (Flask test client, request log off), the median of
--rounds runs of --writes scan POSTs and cluster PATCHes each, on a store
of 1,000 clusters: memory only, then journaled with each INVENTORY_FSYNC
policy. Appends its figures to bench/journal.txt.

    .venv/bin/python -m bench.journal [--clusters 100000] [--scans 1000000]
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

from app import create_app
from bench.seeding import seed
from inventory.config import Config
from inventory.core.ids import new_id
from inventory.embedded.database import embedded_database
from inventory.embedded.encoding import encode
from inventory.resources import store_classes
from inventory.resources.scans.store import ScanStore
from inventory.store import Store
from tests.conftest import client_with

HERE = os.path.dirname(os.path.abspath(__file__))


def build(directory, clusters, scans):
    """A data directory of `clusters` clusters and `scans` scans, compacted;
    (seconds the lock was held to start compaction, seconds the child took)."""
    database = embedded_database("inventory", directory, "no")
    store = Store(database, store_classes())
    seed(store, clusters)  # clusters, their organizations and platforms, `clusters` scans
    first = database.clusters.find_one({"_id": "cluster-00000"})
    template = database.scans.find_one({})
    for start in range(clusters, scans, 10_000):
        batch = []
        for i in range(start, min(start + 10_000, scans)):
            scan_id, scanned_on = new_id("k8scs"), 1_700_000_000 + i * 3600
            batch.append({**template, "_id": ScanStore.key(first["id"], scanned_on, scan_id),
                          "id": scan_id, "scanned_on": scanned_on})
        database.scans.insert_many(batch)
    store.create_indexes(unless_known=True)  # as a start does: records the order keys checked
    os.fsync(database.journal.appending.fd)  # as INVENTORY_FSYNC=everysec keeps it, to a second
    started = time.perf_counter()
    database.journal.compact()
    database.journal.wait_for_compaction(timeout=600)
    child = time.perf_counter() - started
    pause = database.journal.last_pause
    database.journal.close()
    return database, pause, child


def journal_only(database, directory):
    """The same records as a journal of one line per record, no snapshot."""
    os.makedirs(directory)
    raw = database._database
    with open(os.path.join(directory, "journal-000001.jsonl"), "wb") as out:
        for name in raw.list_collection_names():
            out.write(encode([{"c": name, "indexes": raw[name]._store.indexes}]))
            for document in raw[name]._store._documents.values():
                out.write(encode([{"c": name, "put": document}]))


START = """
import json, resource, sys, time
started = time.perf_counter()
what = sys.argv[2]
if what == "replay":
    import mongomock_ng
    from inventory.embedded.journal import Journal
    raw = mongomock_ng.MongoClient()["inventory"]
    Journal.open(sys.argv[1], raw, "no", compact_at=1 << 62)
    clusters, scans = len(raw.clusters._store._documents), len(raw.scans._store._documents)
    seconds, pause = time.perf_counter() - started, None
else:
    from app import create_app
    from inventory.config import Config
    app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN="x",
                            INVENTORY_DATA_DIR=sys.argv[1]))
    seconds = time.perf_counter() - started
    db = app.extensions["inventory.store"].db
    clusters, scans = db.clusters.estimated_document_count(), db.scans.estimated_document_count()
    db.journal.wait_for_compaction(timeout=600)  # one the start began, if any
    db.journal.compact()  # in the started process: what a worker's writes would wait for
    pause = db.journal.last_pause["total_ms"]
    db.journal.wait_for_compaction(timeout=600)
    # a fault: the segment truncated under the process, then its full snapshot
    import os
    from inventory.embedded.database import _LOCK
    db.bench.insert_one({"_id": "written before the fault"})
    os.truncate(db.journal.data_directory.file("journal", db.journal.chain.segment), 0)
    assert db.journal.inspect()
    with _LOCK:
        db.journal.recover(now=True)
    fault_pause, begun = db.journal.last_pause["total_ms"], time.perf_counter()
    db.journal.wait_for_compaction(timeout=600)
    fault_child = time.perf_counter() - begun
print(json.dumps({"seconds": seconds, "clusters": clusters, "scans": scans, "pause_ms": pause,
                  "fault_pause_ms": fault_pause if what == "app" else None,
                  "fault_child_s": fault_child if what == "app" else None,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def start(directory, what):
    """Seconds, records and peak memory of a fresh process's start: the
    replay alone (no compaction), or the whole app."""
    answer = subprocess.run([sys.executable, "-c", START, directory, what], capture_output=True,
                            text=True, cwd=os.path.dirname(HERE), check=True)
    return json.loads(answer.stdout.strip().splitlines()[-1])


def size_mb(directory):
    return sum(os.path.getsize(os.path.join(directory, name))
               for name in os.listdir(directory)) / 1e6


def write_costs(writes, rounds, data_root):
    """{label: (median µs per scan POST, per cluster PATCH)}, the four set-ups
    taking turns in each round (so that drift in the machine hits them alike)."""
    logging.getLogger("inventory.requests").disabled = True
    setups = (("memory only", None), ("journal, fsync no", "no"),
              ("journal, fsync everysec", "everysec"), ("journal, fsync always", "always"))
    timings = {label: ([], []) for label, _ in setups}
    for round_ in range(rounds + 1):  # the first is a warm-up
        for label, fsync in setups:
            path = fsync and os.path.join(data_root, f"{fsync}-{round_}")
            app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN="x",
                                    INVENTORY_DATA_DIR=path, INVENTORY_FSYNC=fsync or "no"))
            store = app.extensions["inventory.store"]
            client = client_with(app, seed(store, 1000))
            started = time.perf_counter()
            for i in range(writes):
                assert client.post("/kubeclusters/cluster-00001/scans",
                                   json={"scanned_on": 1_600_000_000 + i}).status_code == 201
            post = (time.perf_counter() - started) / writes
            started = time.perf_counter()
            for i in range(writes):
                assert client.patch(f"/kubeclusters/cluster-{i % 1000:05d}",
                                    json={"labels": {"n": str(i)}}).status_code == 200
            patch = (time.perf_counter() - started) / writes
            if round_:
                timings[label][0].append(post)
                timings[label][1].append(patch)
            if store.db.journal is not None:
                store.db.journal.close()
    return {label: (statistics.median(posts) * 1e6, statistics.median(patches) * 1e6)
            for label, (posts, patches) in timings.items()}


def store_write_costs(writes, rounds, data_root):
    """{label: (median µs per scan insert, per keyed cluster update)}: the store's
    collections alone (no HTTP, no Flask), where the journal's share shows."""
    setups = (("memory only", None), ("journal, fsync no", "no"),
              ("journal, fsync everysec", "everysec"), ("journal, fsync always", "always"))
    timings = {label: ([], []) for label, _ in setups}
    for round_ in range(rounds + 1):
        for label, fsync in setups:
            path = fsync and os.path.join(data_root, f"store-{fsync}-{round_}")
            database = embedded_database("inventory", path, fsync or "no")
            store = Store(database, store_classes())
            seed(store, 1000)
            template = database.scans.find_one({})
            started = time.perf_counter()
            for i in range(writes):
                database.scans.insert_one({**template, "_id": f"bench/{i:012d}", "id": f"s{i}"})
            insert = (time.perf_counter() - started) / writes
            started = time.perf_counter()
            for i in range(writes):
                database.clusters.update_one({"_id": f"cluster-{i % 1000:05d}"},
                                             {"$set": {"labels": {"n": str(i)}, "_rev": str(i)}})
            update = (time.perf_counter() - started) / writes
            if round_:
                timings[label][0].append(insert)
                timings[label][1].append(update)
            if database.journal is not None:
                database.journal.close()
    return {label: (statistics.median(inserts) * 1e6, statistics.median(updates) * 1e6)
            for label, (inserts, updates) in timings.items()}


WRK_SCRIPT = """
wrk.method = "POST"
wrk.body = "{}"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer bench-token"
"""


def served_write_costs(seconds, rounds, data_root, port=18110):
    """{label: median scan POSTs per second}: gunicorn with gunicorn.conf.py,
    wrk with one kept-alive connection, memory only and journaled
    (everysec) taking turns."""
    import http.client
    script = os.path.join(data_root, "post.lua")
    with open(script, "w") as out:
        out.write(WRK_SCRIPT)
    rates = {"memory only": [], "journal, fsync everysec": []}
    for round_ in range(rounds):
        for label in rates:
            env = {**os.environ, "PORT": str(port), "INVENTORY_ADMIN_TOKEN": "bench-token",
                   "INVENTORY_DATA_DIR": os.path.join(data_root, f"served-{round_}")
                   if "journal" in label else ""}
            env.pop("MONGODB_URI", None)
            server = subprocess.Popen([sys.executable, "-m", "gunicorn", "app:app"],
                                      cwd=os.path.dirname(HERE), env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                def call(method, path, body):
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    connection.request(method, path, json.dumps(body), {
                        "Authorization": "Bearer bench-token",
                        "Content-Type": "application/json"})
                    answer = connection.getresponse()
                    data = json.loads(answer.read() or b"null")
                    connection.close()
                    return answer.status, data
                for _ in range(300):
                    try:
                        call("GET", "/healthz", None)
                        break
                    except OSError:
                        time.sleep(0.1)
                org = call("POST", "/organizations", {"title": "Bench"})[1]["id"]
                call("POST", "/kubeplatforms", {
                    "name": "p", "organization": org, "control_plane": {"provider": "eks"},
                    "infrastructure": {"cloud": {"provider": "aws"}}})
                call("POST", "/kubeclusters", {"name": "c", "platform": "p",
                                               "environment": "dev", "version": "1.30.0"})
                output = subprocess.run(
                    ["wrk", "-t1", "-c1", f"-d{seconds}s", "-s", script,
                     f"http://127.0.0.1:{port}/kubeclusters/c/scans"],
                    capture_output=True, text=True, check=True).stdout
                assert "Non-2xx" not in output, output
                rates[label].append(float(output.split("Requests/sec:")[1].split()[0]))
            finally:
                server.terminate()
                server.wait()
    return {label: statistics.median(values) for label, values in rates.items()}


def table(lines, title, columns, costs):
    base = costs["memory only"]
    lines.append(title)
    lines.append(f"{'':26}{columns[0] + ' µs':>16}{'ratio':>7}{columns[1] + ' µs':>23}{'ratio':>7}")
    for label, (first, second) in costs.items():
        lines.append(f"{label:26}{first:16.1f}{first / base[0]:7.2f}"
                     f"{second:23.1f}{second / base[1]:7.2f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clusters", type=int, default=100_000)
    parser.add_argument("--scans", type=int, default=1_000_000)
    parser.add_argument("--writes", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(HERE, "journal.txt"))
    parser.add_argument("--only", choices=("writes", "start"))
    parser.add_argument("--seconds", type=int, default=10, help="of each served wrk run")
    parser.add_argument("--port", type=int, default=18110, help="of the served runs")
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="bench-journal-")
    lines = []
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=HERE, check=False).stdout.strip()
        lines.append(f"# python -m bench.journal --clusters {args.clusters} --scans {args.scans} "
                     f"--writes {args.writes} --rounds {args.rounds}  ({datetime.date.today()}; "
                     f"nproc {os.cpu_count()}; python {sys.version.split()[0]}; at {commit})")
        if args.only != "start":
            table(lines, f"Writes through the store's collections (no HTTP), 1,000 clusters; "
                  f"median of {args.rounds} runs of {args.writes * 5} each:",
                  ("scan insert", "keyed cluster update"),
                  store_write_costs(args.writes * 5, args.rounds, root))
            table(lines, f"Writes in process (Flask test client), 1,000 clusters; median of "
                  f"{args.rounds} runs of {args.writes} each:",
                  ("scan POST", "cluster PATCH"), write_costs(args.writes, args.rounds, root))
            if shutil.which("wrk"):
                rates = served_write_costs(args.seconds, args.rounds, root, args.port)
                memory = rates["memory only"]
                lines.append(f"Served (gunicorn.conf.py, wrk -c1 -d{args.seconds}s, median of "
                             f"{args.rounds}): scan POSTs per second")
                for label, rate in rates.items():
                    lines.append(f"{label:26}{rate:16.0f}{rate / memory:7.2f}")
            print("\n".join(lines), flush=True)
        if args.only == "writes":
            return finish(args, lines)

        snapshot_dir = os.path.join(root, "snapshot")
        started = time.perf_counter()
        database, pause, child = build(snapshot_dir, args.clusters, args.scans)
        built = time.perf_counter() - started
        lines.append(f"Data: {args.clusters:,} clusters (and as many organizations and "
                     f"platforms), {args.scans:,} scans; built in {built:.0f} s")
        lines.append(f"Compaction of that: the store's lock held {pause['total_ms']:.0f} ms "
                     f"({pause['fsync_ms']:.0f} of them the ended segment's fsync; then the new "
                     f"segment, the fork); the child wrote the snapshot in {child:.1f} s")
        only_dir = os.path.join(root, "journal-only")
        journal_only(database, only_dir)
        del database
        for label, directory in (("snapshot", snapshot_dir), ("journal only", only_dir)):
            size = size_mb(directory)
            replay, whole = start(directory, "replay"), start(directory, "app")
            for figures in (replay, whole):
                assert (figures["clusters"], figures["scans"]) == (args.clusters, args.scans)
            lines.append(f"Start from {label:13} ({size:,.0f} MB): replay "
                         f"{replay['seconds']:.1f} s (peak RSS {replay['rss_mb']:,.0f} MB); "
                         f"whole app {whole['seconds']:.1f} s; a compaction in that process "
                         f"held the lock {whole['pause_ms']:.0f} ms; a fault's snapshot (its "
                         f"segment truncated) held it {whole['fault_pause_ms']:.0f} ms, its "
                         f"child took {whole['fault_child_s']:.1f} s")
            print(lines[-1], flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    finish(args, lines)


def finish(args, lines):
    with open(args.out, "a") as out:
        out.write("\n".join(lines) + "\n\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
