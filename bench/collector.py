"""The cyclic garbage collector under an agent's hourly rescans (issue 43,
item 8): does any collection hold the event loop past 50 ms, however many
scans were written since the start?

The app runs in process as the gevent worker runs it (everything patched),
from the module gunicorn loads (`app:app`: its start freezes what it read),
on a copy of a data dir `flask --app app seed` wrote (made first when
--estate does not exist). One greenlet posts a typical observed scan
(inventory.cli.seed.typical_scan) into each cluster in turn, as an agent
rescanning every cluster hourly does, --scans in all. Meanwhile:

- a probe greenlet wakes every 20 ms (the issue's idle /healthz probe); the
  loop thread's CPU time between two of its wakeups is the longest stretch
  that ran without letting the probe in (a hold; its wall time beside it);
- `gc.callbacks` time every collection by generation (thread CPU time);
- every --every scans, the objects the collector tracks (outside the
  permanent generation) are counted.

    .venv/bin/python -m bench.collector [--estate /tmp/estate10k] [--clusters 10000]
        [--scans-per-cluster 10] [--scans 60000] [--every 10000]

Appends its table to bench/collector.txt. Figures are CPU time of the loop's
thread: other processes on a loaded machine do not inflate them.
"""
from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402

from bench import estates  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = "bench-collector-admin-token-0123456789"
PROMISE_MS = 50
PROBE_EVERY = 0.020


class Collections:
    """Each collection's generation and CPU ms, from gc.callbacks."""

    def __init__(self):
        self.done, self._started = [], None
        gc.callbacks.append(self)

    def __call__(self, phase, info):
        if phase == "start":
            self._started = time.thread_time()
        elif self._started is not None:
            self.done.append((info["generation"], (time.thread_time() - self._started) * 1000))
            self._started = None

    def close(self):
        gc.callbacks.remove(self)


class Probe:
    """Wakes every 20 ms; keeps (CPU ms, wall ms) of the loop thread between wakeups."""

    def __init__(self):
        self.samples, self.running = [], True
        self.greenlet = gevent.spawn(self.run)

    def run(self):
        last_cpu, last_wall = time.thread_time(), time.monotonic()
        while self.running:
            gevent.sleep(PROBE_EVERY)
            cpu, wall = time.thread_time(), time.monotonic()
            self.samples.append(((cpu - last_cpu) * 1000, (wall - last_wall) * 1000))
            last_cpu, last_wall = cpu, wall

    def taken(self):
        samples, self.samples = self.samples, []
        return samples


def cluster_names(client, headers):
    names, after = [], ""
    while True:
        page = client.get(f"/kubeclusters?limit=100{after}", headers=headers).get_json()
        names.extend((cluster["name"], cluster["version"]) for cluster in page["results"])
        token = page["pagination"]["continue"]
        if not token:
            return names
        after = f"&continue={token}"


def main():
    parser = argparse.ArgumentParser()
    estates.add_arguments(parser, "/tmp/estate10k", 10_000)
    parser.add_argument("--scans", type=int, default=60_000)
    parser.add_argument("--every", type=int, default=10_000)
    parser.add_argument("--note", default="", help="said in the table's heading")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "collector.txt"))
    args = parser.parse_args()
    work, data = estates.copied(args, "collector-")
    os.environ.update(INVENTORY_DATA_DIR=data, INVENTORY_ADMIN_TOKEN=ADMIN)
    sys.path.insert(0, ROOT)
    import logging

    from app import app  # the module's app: made from the environment, as gunicorn's is
    from inventory.cli.seed import typical_scan

    logging.getLogger("inventory").setLevel(logging.WARNING)  # no access line per scan
    client = app.test_client()
    headers = {"Authorization": f"Bearer {ADMIN}"}
    names = cluster_names(client, headers)
    gc.collect()  # the listing's own garbage: the rescans start from a quiet heap
    collections, probe = Collections(), Probe()
    rows, posted, statuses = [], 0, {}
    started = time.monotonic()

    def rescans():
        nonlocal posted
        while posted < args.scans:
            name, version = names[posted % len(names)]
            status = client.post(f"/kubeclusters/{name}/scans",
                                 json=typical_scan(version, posted), headers=headers).status_code
            statuses[status] = statuses.get(status, 0) + 1
            posted += 1
            if posted % args.every == 0:
                rows.append(row(posted, collections, probe))
    gevent.spawn(rescans).get()
    took = time.monotonic() - started
    probe.running = False
    collections.close()
    app.extensions["inventory.store"].db.journal.close()
    shutil.rmtree(work, ignore_errors=True)
    lines = [f"# python -m bench.collector  ({datetime.datetime.now():%Y-%m-%d %H:%M}, "
             f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; estate {args.estate}: "
             f"{args.clusters:,} clusters, {args.clusters * args.scans_per_cluster:,} scans)"
             + (f"; {args.note}" if args.note else ""),
             f"{args.scans:,} typical observed scans posted in {took:.0f} s "
             f"({dict(sorted(statuses.items()))}); a probe every {PROBE_EVERY * 1000:.0f} ms; "
             f"promise: no hold over {PROMISE_MS} ms of the loop's CPU",
             f"{'scans':>7}{'tracked':>10}{'gen2 n':>8}{'gen2 max':>10}{'gen1 max':>10}"
             f"{'hold max':>10}{'wall max':>10}{'>50ms':>7}{'>250ms':>8}"]
    for scans, tracked, full, full_max, young_max, hold, wall, over50, over250 in rows:
        mark = "  OVER" if hold > PROMISE_MS else ""
        lines.append(f"{scans:>7,}{tracked:>10,}{full:>8}{full_max:>10.1f}{young_max:>10.1f}"
                     f"{hold:>10.1f}{wall:>10.1f}{over50:>7}{over250:>8}{mark}")
    lines.append("(tracked: objects the collector tracks outside the permanent generation; "
                 "gen2/gen1 max: the longest collection of that generation, CPU ms; hold: the "
                 "longest stretch between two probes, CPU ms, and its wall ms; >50ms/>250ms: "
                 "holds over that, CPU)")
    text = "\n".join(lines) + "\n"
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n")


def row(posted, collections, probe):
    done, collections.done = collections.done, []
    samples = probe.taken()
    full = [ms for generation, ms in done if generation == 2]
    young = [ms for generation, ms in done if generation < 2]
    tracked = len(gc.get_objects())  # the permanent generation's are not listed
    gevent.sleep(PROBE_EVERY * 2)
    probe.taken()  # the count's own stretch is the bench's, not the service's
    holds = [cpu for cpu, _ in samples]
    worst = max(samples, default=(0.0, 0.0))
    return (posted, tracked, len(full), max(full, default=0.0), max(young, default=0.0),
            worst[0], worst[1], sum(1 for cpu in holds if cpu > 50),
            sum(1 for cpu in holds if cpu > 250))


if __name__ == "__main__":
    main()
