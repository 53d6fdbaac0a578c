"""The embedded store's envelope: how long each kind of work holds the event
loop at 100,000 clusters and 1,000,000 scans (docs/design/envelope.md).

Served as the Procfile serves it (gunicorn.conf.py, the gevent worker, one
process) on a copy of a data dir that `flask --app app seed` wrote (made
first, with --clusters and --scans-per-cluster, when --estate does not
exist). A probe thread asks `/healthz` on its own kept-alive connection
every 5 ms; while one operation runs, the probe's slowest answer, less its
idle median, is how long that operation held the loop (the promise: at most
50 ms). The operations run one at a time, each after a quiet second:

- start-up: from the process's spawn to the first `/healthz` answer, and
  the compaction's pause as the journal logs it;
- idle: 12 s of nothing (the outbox sweep runs every 5 s);
- first pages: clusters by key, clusters by name, one cluster's scans;
- summaries: by environment and version, by support status, by readiness
  status (and observed minor); the fleet's blockers (all, and production's
  in error); the first page of clusters whose readiness is `error`;
- a scan's POST into a cluster past SCAN_RETENTION_COUNT (run at 10): the trim;
  three typical observed scans (inventory.cli.seed.typical_scan);
- the integrations, after 1 in 20 clusters (a team's) got an `endpoint`:
  Argo CD's generator and Prometheus' discovery for that team, and for every
  cluster (Argo CD's a 422 past MAX_INTEGRATION_CLUSTERS);
- forced deletes: a platform, then an organization (each with 1/K of the
  clusters and their scans).

    .venv/bin/python -m bench.envelope [--estate /tmp/estate] [--clusters 100000]
        [--scans-per-cluster 10] [--organizations 10] [--port N]

Appends its table to bench/envelope.txt.
"""
import argparse
import datetime
import http.client
import json
import os
import re
import shutil
import statistics
import subprocess
import threading
import time
import urllib.parse

from bench import estates
from bench.run import GUNICORN, ROOT, call, free_ports
from inventory.cli.seed import typical_scan

ADMIN = "bench-envelope-admin-token"
PROMISE_MS = 50


class Probe(threading.Thread):
    """`GET /healthz` every 5 ms on one kept-alive connection: (sent, ms)."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.samples, self.stopping = port, [], threading.Event()

    def run(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        while not self.stopping.is_set():
            sent = time.monotonic()
            connection.request("GET", "/healthz")
            connection.getresponse().read()
            self.samples.append((sent, (time.monotonic() - sent) * 1000))
            time.sleep(0.005)

    def worst(self, start, end):
        """The slowest answer to a probe sent in [start, end]."""
        return max((ms for sent, ms in self.samples if start <= sent <= end), default=0.0)

    def idle_median(self):
        return statistics.median(ms for _, ms in self.samples)


def request(port, method, path, body=None):
    """As the admin: (status, body bytes)."""
    return call(port, method, path, None if body is None else json.dumps(body), token=ADMIN)


def forced_delete(port, org):
    """Delete an organization by force; its answer, how long it took, and
    what of it is left (nothing, or the delete left orphans)."""
    started = time.monotonic()
    status = request(port, "DELETE", f"/organizations/{org}?force=true")[0]
    took = time.monotonic() - started
    query = urllib.parse.urlencode({"filter": f'organization="{org}"', "limit": 1})
    left = [len(json.loads(request(port, "GET", f"/{kind}?{query}")[1])["results"])
            for kind in ("kubeplatforms", "kubeclusters")]
    gone = request(port, "GET", f"/organizations/{org}")[0] == 404 and left == [0, 0]
    return f"{status} in {took:.1f} s, " + ("nothing left" if gone else f"LEFT {left}")


def main():
    parser = argparse.ArgumentParser()
    estates.add_arguments(parser, "/tmp/estate", 100_000)  # 10 organizations: 10,000 each
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "envelope.txt"))
    parser.add_argument("--port", type=int, default=None, help="default: a free one")
    args = parser.parse_args()
    work, data = estates.copied(args, "envelope-")
    (port,) = [args.port] if args.port else free_ports(1)
    log_path = os.path.join(work, "gunicorn.log")
    # the Procfile's gunicorn, its worker timeout (30 s) included: a request
    # that held the loop that long would get the worker killed
    env = {**os.environ, "PORT": str(port), "WEB_CONCURRENCY": "1",
           "INVENTORY_DATA_DIR": data, "INVENTORY_ADMIN_TOKEN": ADMIN,
           "SCAN_RETENTION_COUNT": "10"}
    env.pop("GUNICORN_TIMEOUT", None)
    env.pop("MONGODB_URI", None)
    rows = []
    spawned = time.monotonic()
    with open(log_path, "w") as log:
        process = subprocess.Popen([GUNICORN, "-c", os.path.join(ROOT, "gunicorn.conf.py"),
                                    "app:app"], cwd=ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        while True:
            if process.poll() is not None:
                raise SystemExit(open(log_path).read()[-3000:])
            try:
                if request(port, "GET", "/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        rows.append(("start-up (spawn to the first answer)", (time.monotonic() - spawned) * 1000,
                     "10 s promised"))
        probe = Probe(port)
        probe.start()
        time.sleep(3)
        idle = probe.idle_median()

        def held(name, action):
            time.sleep(1)
            start = time.monotonic()
            outcome = action()
            time.sleep(0.05)
            worst = probe.worst(start, time.monotonic())
            rows.append((name, max(0.0, worst - idle), outcome))

        def get(path):
            return lambda: f"{request(port, 'GET', path)[0]} in " \
                           f"{timed(lambda: request(port, 'GET', path)):.0f} ms (again)"

        held("idle for 12 s (two outbox sweeps)", lambda: time.sleep(12) or "")
        held("first page of clusters", get("/kubeclusters?limit=20"))
        held("first page of clusters by name", get("/kubeclusters?limit=20&order_by=name"))
        clusters = json.loads(request(port, "GET", "/kubeclusters?limit=1")[1])["results"]
        cluster = clusters[0]["name"]
        held("first page of one cluster's scans", get(f"/kubeclusters/{cluster}/scans?limit=20"))
        held("summary by environment, version",
             get("/kubeclusters:summary?group_by=environment,version"))
        held("summary by support.status", get("/kubeclusters:summary?group_by=support.status"))
        held("summary by readiness.status", get("/kubeclusters:summary?group_by=readiness.status"))
        held("summary by readiness.status, observed.minor",
             get("/kubeclusters:summary?group_by=readiness.status,observed.minor"))
        held("the fleet's blockers (:blockers)", get("/kubeclusters:blockers"))
        held("blockers of production clusters in error", get(
            "/kubeclusters:blockers?filter=" + urllib.parse.quote(
                'environment="production" AND readiness.status="error"')))
        held("first page of clusters whose readiness is error", get(
            "/kubeclusters?limit=20&filter=" + urllib.parse.quote('readiness.status="error"')))
        held("3 scans into a cluster at SCAN_RETENTION_COUNT (the trim)", lambda: ", ".join(
            str(request(port, "POST", f"/kubeclusters/{cluster}/scans", {})[0])
            for _ in range(3)))
        held("3 typical observed scans into a cluster", lambda: ", ".join(
            str(request(port, "POST", f"/kubeclusters/{cluster}/scans",
                        typical_scan("1.30.4", n))[0]) for n in range(3)))
        summary_loops = loops_against_others(port, cluster, probe)
        integrations(port, held)
        platforms = json.loads(request(port, "GET", "/kubeplatforms?limit=2")[1])["results"]
        held("forced delete of a platform (1/K of the estate)", lambda: str(request(
            port, "DELETE", f"/kubeplatforms/{platforms[1]['name']}?force=true")[0]))
        orgs = json.loads(request(port, "GET", "/organizations?limit=3")[1])["results"]
        held("forced delete of an organization (1/K of the estate)",
             lambda: forced_delete(port, orgs[2]["id"]))
        probe.stopping.set()
        probe.join()
    finally:
        process.terminate()
        process.wait(timeout=60)
    rows.extend(summary_loops)
    log_text = open(log_path).read()
    pauses = re.findall(r"the store waited (\d+) ms", log_text)
    if pauses:
        rows.append(("journal compaction (the store's wait, as logged)",
                     max(map(float, pauses)), f"{len(pauses)} compaction(s)"))
    shutil.rmtree(work, ignore_errors=True)
    lines = [f"# python -m bench.envelope  ({datetime.datetime.now():%Y-%m-%d %H:%M}, "
             f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; estate {args.estate}: "
             f"{args.clusters:,} clusters, {args.clusters * args.scans_per_cluster:,} scans, "
             f"{args.organizations:,} organizations)",
             f"probe's idle median {idle:.1f} ms; promise: no hold over {PROMISE_MS} ms",
             f"{'what':<62} {'held ms':>9}  outcome"]
    for name, ms, outcome in rows:
        mark = "" if name.startswith("start-up") or ms <= PROMISE_MS else "  OVER"
        lines.append(f"{name:<62} {ms:9.1f}  {outcome}{mark}")
    text = "\n".join(lines)
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n\n")


TEAM = 'labels.team="team-1"'  # the seed's 1 in 20 clusters


def integrations(port, held):
    """Give the team's clusters an endpoint, then time the integrations."""
    names, after = [], ""
    while True:
        page = json.loads(request(port, "GET", "/kubeclusters?limit=100&filter="
                                  + urllib.parse.quote(TEAM) + after)[1])
        names.extend(cluster["name"] for cluster in page["results"])
        if not page["pagination"]["continue"]:
            break
        after = "&continue=" + urllib.parse.quote(page["pagination"]["continue"])

    def give_endpoints(share):
        for name in share:
            request(port, "PATCH", f"/kubeclusters/{name}",
                    {"endpoint": f"https://api.{name}.example.com:6443"})
    writers = [threading.Thread(target=give_endpoints, args=(names[i::4],)) for i in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()

    def argocd(filter_text):
        parameters = {"filter": filter_text} if filter_text else {}
        body = {"applicationSetName": "bench", "input": {"parameters": parameters}}
        return lambda: answered(lambda: request(port, "POST", "/integrations/argocd/api/v1/"
                                                "getparams.execute", body),
                                lambda found: len(found["output"]["parameters"]))

    def prometheus(filter_text):
        path = "/integrations/prometheus/targets" + (
            "?filter=" + urllib.parse.quote(filter_text) if filter_text else "")
        return lambda: answered(lambda: request(port, "GET", path), len)

    held(f"Argo CD, one team's clusters ({len(names):,})", argocd(TEAM))
    held("Argo CD, every cluster (a 422 past the cap)", argocd(None))
    held(f"Prometheus, one team's clusters ({len(names):,} with an endpoint)",
         prometheus(TEAM))
    held("Prometheus, every cluster (the team's with an endpoint)", prometheus(None))


def answered(send, count):
    """`status, N items in T ms (again)`."""
    status, body = send()
    items = f", {count(json.loads(body)):,} items" if status == 200 else ""
    return f"{status}{items} in {timed(send):.0f} ms (again)"


def others_gets(port, cluster, seconds):
    """An admin's GET of one cluster every 20 ms on one kept-alive
    connection for `seconds`: the latencies in ms."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    latencies, ends = [], time.monotonic() + seconds
    while time.monotonic() < ends:
        sent = time.monotonic()
        connection.request("GET", f"/kubeclusters/{cluster}",
                           headers={"Authorization": f"Bearer {ADMIN}"})
        connection.getresponse().read()
        latencies.append((time.monotonic() - sent) * 1000)
        time.sleep(max(0.0, 0.02 - (time.monotonic() - sent)))
    connection.close()
    return latencies


def loops_against_others(port, cluster, probe):
    """The issue's fairness shape: four loops of summaries by one reader
    token (its rate limits as configured) against another caller's GETs."""
    status, body = request(port, "POST", "/tokens", {"name": "summary-loops", "role": "reader"})
    reader = json.loads(body)["token"]
    alone = statistics.median(others_gets(port, cluster, 8))
    stopping, statuses = threading.Event(), {}

    def loop():
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        while not stopping.is_set():
            connection.request("GET", "/kubeclusters:summary?group_by=environment,version",
                               headers={"Authorization": f"Bearer {reader}"})
            answer = connection.getresponse()
            answer.read()
            statuses[answer.status] = statuses.get(answer.status, 0) + 1
    loops = [threading.Thread(target=loop, daemon=True) for _ in range(4)]
    start = time.monotonic()
    for thread in loops:
        thread.start()
    loaded = statistics.median(others_gets(port, cluster, 8))
    stopping.set()
    for thread in loops:
        thread.join()
    worst = max(0.0, probe.worst(start, time.monotonic()) - probe.idle_median())
    return [("4 summary loops of one reader token (longest hold)", worst,
             f"others' GET p50 {alone:.1f} -> {loaded:.1f} ms ({loaded / alone:.1f}x); "
             f"summaries {dict(sorted(statuses.items()))}")]


def timed(action):
    start = time.monotonic()
    action()
    return (time.monotonic() - start) * 1000


if __name__ == "__main__":
    main()
