"""The service against two floors, in one run.

For each size N it seeds the embedded store with N records per collection and
starts three servers, each under gunicorn with gunicorn.conf.py as the
Procfile runs it (the gevent worker, one process, keep-alive):

- service: the service itself (bench/seeded_app.py);
- framework: a minimal flask-smorest app dumping the service's answers, held
  in memory, with the service's schemas (bench/framework_app.py): the floor
  the framework sets;
- bare: bare Flask sending the service's answers as captured bytes
  (bench/baseline_app.py): the floor Flask and gunicorn set.

The floors' answers are the service's, captured once per size; the
framework's are checked equal to them (as JSON) before any load. All three
get the same load (wrk with one connection kept alive, installed from
Debian's packages when it can be; else a Python client on one kept-alive
connection), the order of the three rotating each round. Per route it prints
the medians over the rounds of requests/s, p50 and p99 latency, the
requests/s ratios service/bare, service/framework and framework/bare, and
whether the service's p99 is within 3x its p50; at the end, the targets and
the growth of each route's p50 with N. The report goes to --out too.

With --against REV, a fourth server joins the rotation: the service as it
was at the commit REV (a git worktree of it, made for the run and removed
after), seeded the same way (its own random ids: the routes are found on
it the same way, and its answers are not compared), so that a change is
measured against what it changed in one run, under one load.

    scripts/bench [--sizes 100,1000,10000,100000] [--rounds 7] [--duration 3]
                  [--against REV] [--out bench/latest.txt]
"""
import argparse
import contextlib
import datetime
import http.client
import json
import os
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from urllib.parse import quote

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUNICORN = os.path.join(os.path.dirname(sys.executable), "gunicorn")

# Each server's gunicorn app; the order of a round rotates from this one.
SERVERS = {"service": "bench.seeded_app:app",
           "framework": "bench.framework_app:create_app()",
           "bare": "bench.baseline_app:app"}
FLOORS = tuple(SERVERS)  # the service and its two floors, as the tables show them
AGAINST = None  # (commit, subject) of --against
BEFORE = "before"  # the service at --against's commit, when given: SERVERS gains it
FILTER = 'environment="production" AND version<"1.30"'
ORDER_BY = "version desc"  # issue 13: an ordered page costs at most 3x an unordered first one
MAX_ORDERED = 3.0

# The targets (issue 12), judged at TARGET_N: a route's service/bare
# requests/s at least this much...
RATIO_TARGETS = {"GET list, limit 20": 0.35, "GET platforms, limit 20": 0.35,
                 "GET one platform": 0.65,
                 "GET one cluster by id": 0.65, "POST a scan": 0.45}
# ...the single-record routes cost at most a third more than the framework floor
FRAMEWORK_TARGETS = ("GET one platform", "GET one cluster by id", "POST a scan")
MIN_SINGLE_RECORD_SF = 0.75
TARGET_N = 100
MAX_TAIL = 3.0  # ...p99 at most this many times p50, for every route...
MAX_GROWTH = 1.3  # ...and p50 at the largest N at most this many times p50 at the smallest


# --- HTTP -------------------------------------------------------------------

def free_ports(count):
    """`count` distinct free ports (all held open while chosen, so none repeats)."""
    probes = [socket.socket() for _ in range(count)]
    try:
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]
    finally:
        for probe in probes:
            probe.close()


def headers(token=None, host=None):
    sent = {"Content-Type": "application/json"}
    if token:
        sent["Authorization"] = f"Bearer {token}"
    if host:  # the floors are checked as if asked for the service's host
        sent["Host"] = host
    return sent


def call(port, method, path, body=None, token=None, host=None):
    """One request on its own connection: (status, body bytes)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers(token, host))
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def start(app, port, env, tree=ROOT):
    """`app` of the checkout `tree` under gunicorn with its gunicorn.conf.py,
    once it answers /healthz."""
    process = subprocess.Popen(
        [GUNICORN, "-c", os.path.join(tree, "gunicorn.conf.py"), app],
        cwd=tree, env={**os.environ, **env, "PORT": str(port), "WEB_CONCURRENCY": "1",
                       "GUNICORN_TIMEOUT": "300"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        try:
            if call(port, "GET", "/healthz")[0] == 200:
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"{app} did not start")


def stop(processes):
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


# --- load -------------------------------------------------------------------

def ensure_wrk():
    if shutil.which("wrk"):
        return shutil.which("wrk")
    if shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], capture_output=True, check=False,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return shutil.which("wrk")


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _ms(text):
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * _UNITS[unit]


def measure_wrk(wrk, port, route, token, duration, workdir, connections=1):
    """(requests/s, p50 ms, p99 ms) of `route` for `duration` seconds: wrk,
    one thread, `connections` connections (kept alive, as wrk does)."""
    command = [wrk, "-t1", f"-c{connections}", f"-d{int(duration)}s", "--latency",
               "-H", f"Authorization: Bearer {token}"]
    if route["method"] == "POST":
        script = os.path.join(workdir, "post.lua")
        with open(script, "w") as lua:
            lua.write(f'wrk.method = "POST"\nwrk.body = {json.dumps(route["body"])}\n'
                      'wrk.headers["Content-Type"] = "application/json"\n')
        command += ["-s", script]
    run = subprocess.run(command + [f"http://127.0.0.1:{port}{route['path']}"],
                         capture_output=True, text=True, check=False)
    output = run.stdout
    if "Requests/sec" not in output or "Non-2xx" in output or "Socket errors" in output:
        raise SystemExit(f"wrk failed on {route['name']} at port {port}:\n{output}{run.stderr}")
    found = [re.search(pattern, output, re.MULTILINE) for pattern in (
        r"Requests/sec:\s+([\d.]+)", r"^\s+50%\s+(\S+)\s*$", r"^\s+99%\s+(\S+)\s*$")]
    if None in found:
        raise SystemExit(f"wrk's output on {route['name']} at port {port} is not as expected:\n"
                         f"{output}{run.stderr}")
    return float(found[0].group(1)), _ms(found[1].group(1)), _ms(found[2].group(1))


def measure_python(port, route, token, duration):
    """As measure_wrk, with a Python client on one kept-alive connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    latencies, end = [], time.monotonic() + duration
    try:
        while time.monotonic() < end:
            started = time.perf_counter()
            connection.request(route["method"], route["path"], body=route.get("body"),
                               headers=headers(token))
            response = connection.getresponse()
            response.read()
            latencies.append((time.perf_counter() - started) * 1000)
            if not 200 <= response.status < 300:
                raise SystemExit(f"{route['name']} at port {port}: status {response.status}")
    finally:
        connection.close()
    latencies.sort()
    return (len(latencies) / duration, latencies[len(latencies) // 2],
            latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))])


# --- routes and answers -----------------------------------------------------

def discover_routes(fetch, n):
    """The bench's routes on this estate. `fetch(method, path, body=None)`
    asks the service: (status, body bytes).

    The page at 90% depth continues a page the service served: the token is
    found by walking the list 100 records at a time (at N=100,000, 900
    pages: a few seconds)."""
    first = json.loads(fetch("GET", "/kubeclusters?limit=1")[1])["results"][0]
    platform = json.loads(fetch("GET", "/kubeplatforms?limit=1")[1])["results"][0]["name"]
    deep_token = token_at_depth(fetch, int(n * 0.9))
    ordered = f"/kubeclusters?limit=20&order_by={quote(ORDER_BY, safe='')}"
    deep_ordered = token_at_depth(fetch, int(n * 0.9), f"&order_by={quote(ORDER_BY, safe='')}")
    return [
        {"name": "GET list, limit 20", "method": "GET", "path": "/kubeclusters?limit=20"},
        {"name": "GET list, limit 100", "method": "GET", "path": "/kubeclusters?limit=100"},
        {"name": "GET platforms, limit 20", "method": "GET", "path": "/kubeplatforms?limit=20"},
        {"name": "GET one platform", "method": "GET", "path": f"/kubeplatforms/{platform}"},
        {"name": "GET one cluster by id", "method": "GET", "path": f"/kubeclusters/{first['id']}"},
        {"name": "POST a scan", "method": "POST", "path": f"/kubeclusters/{first['name']}/scans",
         "body": '{"scanned_on": 1700000000}'},
        {"name": "GET page at 90% depth", "method": "GET",
         "path": f"/kubeclusters?limit=20&continue={quote(deep_token, safe='')}"},
        {"name": "GET filtered page", "method": "GET",
         "path": f"/kubeclusters?limit=20&filter={quote(FILTER, safe='')}"},
        {"name": "GET ordered page", "method": "GET", "path": ordered},
        {"name": "GET ordered, 90% deep", "method": "GET",
         "path": f"{ordered}&continue={quote(deep_ordered, safe='')}"},
    ]


def token_at_depth(fetch, depth, query=""):
    """The continue token after `depth` clusters of the list (in `query`'s
    order), found by walking it 100 records at a time."""
    seen, token = 0, ""
    while seen < depth:
        path = f"/kubeclusters?limit={min(100, depth - seen)}{query}"
        if token:
            path += f"&continue={quote(token, safe='')}"
        page = json.loads(fetch("GET", path)[1])
        seen += len(page["results"])
        token = page["pagination"]["continue"]
    return token


def answer_key(route):
    """How the floors find a route's answer: "METHOD path?query"."""
    return f"{route['method']} {route['path']}"


def capture(routes, fetch):
    """The service's answers to the routes: answer_key -> [status, body text]."""
    answers = {}
    for route in routes:
        status, body = fetch(route["method"], route["path"], route.get("body"))
        if not 200 <= status < 300:
            raise SystemExit(f"the service answered {status} to {route['name']}: {body[:300]!r}")
        answers[answer_key(route)] = [status, body.decode()]
    return answers


def check_same(routes, answers, fetch, who):
    """Stop unless `fetch` answers every route as the service did (status,
    and the body as JSON: `$schema` URLs and continue tokens included)."""
    for route in routes:
        status, body = fetch(route["method"], route["path"], route.get("body"))
        expected_status, expected_body = answers[answer_key(route)]
        if status != expected_status or json.loads(body) != json.loads(expected_body):
            raise SystemExit(f"{who} does not answer {route['name']} as the service does:\n"
                             f"  service: {expected_status} {expected_body[:600]}\n"
                             f"  {who}: {status} {body[:600].decode(errors='replace')}")


def records_in(answer):
    """How many records an answer holds (a list page's results, else 1)."""
    body = json.loads(answer[1])
    return len(body["results"]) if "results" in body else 1


# --- one size ---------------------------------------------------------------

@dataclass
class SizeRun:
    """One size: its routes, the records each answer holds, every round's figures."""

    n: int
    routes: list
    records: dict  # route name -> records in its answer
    results: dict = field(default_factory=dict)  # (route name, server) -> [(r/s, p50, p99)]
    notes: str = ""
    connections: int = 1  # the load's kept-alive connections


def rotation(round_):
    """The servers' order in a round: each round starts one further on."""
    names = list(SERVERS)
    shift = round_ % len(names)
    return names[shift:] + names[:shift]


def run_rounds(size, measure, rounds, duration):
    """Warm every server up on every route, then `rounds` rotating rounds."""
    for route in size.routes:
        for server in SERVERS:
            measure(server, route, 1)
    for round_ in range(rounds):
        for route in size.routes:
            for server in rotation(round_):
                size.results.setdefault((route["name"], server), []).append(
                    measure(server, route, duration))


class Servers:
    """The three servers of one size, each on its own port, and the bench's
    token; `stop()` ends them."""

    def __init__(self, workdir, before_tree=None):
        self.workdir, self.processes, self.token = workdir, [], None
        self.ports = dict(zip(SERVERS, free_ports(len(SERVERS))))
        self.before_tree, self.before_token, self.before_routes = before_tree, None, {}

    def start(self, server, env):
        tree = self.before_tree if server == BEFORE else ROOT
        self.processes.append(start(SERVERS[server], self.ports[server], env, tree))

    def token_of(self, server):
        return self.before_token if server == BEFORE else self.token

    def fetcher(self, server):
        """`fetch(method, path, body=None)` on `server`, for the service's
        host: the floors then make the same `$schema` URLs as the service."""
        host = f"127.0.0.1:{self.ports['service' if server != BEFORE else BEFORE]}"
        return lambda method, path, body=None: call(self.ports[server], method, path, body,
                                                    self.token_of(server), host)

    def measurer(self, wrk, connections=1):
        """`measure(server, route, seconds)`: (requests/s, p50 ms, p99 ms);
        the service before is asked its own route of the same name."""
        def measure(server, route, seconds):
            if server == BEFORE:
                route = self.before_routes[route["name"]]
            if wrk:
                return measure_wrk(wrk, self.ports[server], route, self.token_of(server),
                                   seconds, self.workdir, connections)
            return measure_python(self.ports[server], route, self.token_of(server), seconds)
        return measure

    def stop(self):
        stop(self.processes)


ADMIN_TOKEN = "bench-run-bootstrap-admin-token-0123456789"


def start_service(servers, n, journal=True, token="admin", server="service"):
    """The service on N seeded records; a note of how long it took. As the
    Procfile runs it: journaled in a data directory (`journal`), and asked
    by the bootstrap admin (`token` "admin", as a deployment's first
    caller) or by a writer's token the store keeps ("writer"). `server`:
    "service", or BEFORE (the service at --against's commit)."""
    state_file = os.path.join(servers.workdir, f"{server}-state.json")
    started = time.monotonic()
    # the limiter counts every request as it would in production, but the
    # bench's token may send more than its default 1,000 a minute
    env = {"BENCH_N": str(n), "BENCH_STATE_FILE": state_file,
           "RATE_LIMIT": "100000000 per minute", "INVENTORY_ADMIN_TOKEN": ADMIN_TOKEN,
           "INVENTORY_DATA_DIR": os.path.join(servers.workdir, f"{server}-data")
           if journal else ""}
    servers.start(server, env)
    with open(state_file) as state_json:
        state = json.load(state_json)
    if server == BEFORE:
        servers.before_token = ADMIN_TOKEN if token == "admin" else state["token"]
    else:
        servers.token = ADMIN_TOKEN if token == "admin" else state["token"]
    return (f"{server} up in {time.monotonic() - started:.1f} s "
            f"(seeding {state['seeded_in']:.1f} s)")


def start_floors(servers, routes, answers):
    """The framework and bare floors on the service's answers, each checked
    to answer every route as the service did."""
    bodies_file = os.path.join(servers.workdir, "bodies.json")
    with open(bodies_file, "w") as out:
        json.dump(answers, out)
    for server in ("framework", "bare"):
        servers.start(server, {"BENCH_BODIES": bodies_file})
        check_same(routes, answers, servers.fetcher(server), server)


def bench_size(n, rounds, duration, wrk, connections=(1,), journal=True, token="admin",
               before_tree=None):
    """Seed N, start the three servers (four with `before_tree`), check the
    floors' answers, load them with each number of `connections` in turn: a
    SizeRun for each."""
    workdir = tempfile.mkdtemp(prefix="inventory-bench-")
    servers = Servers(workdir, before_tree)
    try:
        notes = start_service(servers, n, journal, token)
        if before_tree:
            notes += "; " + start_service(servers, n, journal, token, BEFORE)
            servers.before_routes = {route["name"]: route for route in
                                     discover_routes(servers.fetcher(BEFORE), n)}
        started = time.monotonic()
        routes = discover_routes(servers.fetcher("service"), n)
        notes += f"; 90% token found in {time.monotonic() - started:.1f} s"
        answers = capture(routes, servers.fetcher("service"))
        start_floors(servers, routes, answers)
        records = {r["name"]: records_in(answers[answer_key(r)]) for r in routes}
        runs = []
        for count in connections:
            runs.append(SizeRun(n, routes, records, connections=count,
                                notes=notes + "; the floors' answers equal the service's"))
            run_rounds(runs[-1], servers.measurer(wrk, count), rounds, duration)
        return runs
    finally:
        servers.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# --- report -----------------------------------------------------------------

class Report:
    """Prints lines as they come and keeps them for the --out file."""

    def __init__(self):
        self.lines = []

    def __call__(self, text=""):
        text = text.rstrip()
        print(text, flush=True)
        self.lines.append(text)

    def write(self, path):
        with open(path, "w") as out:
            out.write("\n".join(self.lines) + "\n")


def median_of(samples):
    return tuple(statistics.median(s[i] for s in samples) for i in range(3))


def verdict(value, target, at_least):
    """"meets", or by how much `value` misses `target`."""
    if (value >= target) if at_least else (value <= target):
        return "meets"
    gap = abs(value - target)
    return f"misses by {gap:.2f}" if gap >= 0.005 else f"misses by {gap:.3f}"


def medians(size):
    """(route name, server) -> median (r/s, p50, p99)."""
    return {key: median_of(samples) for key, samples in size.results.items()}


def report_size(out, size, load):
    out(f"\nN = {size.n:,} records per collection; load: {load}")
    out(f"({size.notes})")
    if size.connections > 1:
        out("(p99 here is wrk's, which breaks Little's law with several connections on one "
            "thread: read the rates; docs/performance.md)")
    group = "{:-^24}"
    out(f"{'':<29}" + "".join(f"  {group.format(f' {s} ')}" for s in FLOORS)
        + f"  {'---- r/s ratios ----':<21}  service")
    out(f"{'route':<24}{'recs':>5}" + "  {:>7}{:>8}{:>9}".format("r/s", "p50 ms", "p99 ms") * 3
        + f"  {'s/b':>5}{'s/f':>8}{'f/b':>8}  p99/p50 <= {MAX_TAIL:g}")
    figures = medians(size)
    for route in size.routes:
        name = route["name"]
        service, framework, bare = (figures[(name, s)] for s in FLOORS)
        tail = service[2] / service[1]
        out(f"{name:<24}{size.records[name]:>5}"
            + "".join(f"  {rps:>7.0f}{p50:>8.2f}{p99:>9.2f}" for rps, p50, p99
                      in (service, framework, bare))
            + f"  {service[0] / bare[0]:>5.2f}{service[0] / framework[0]:>8.2f}"
              f"{framework[0] / bare[0]:>8.2f}  {tail:.2f} {'yes' if tail <= MAX_TAIL else 'no'}")
    first, deep = figures[("GET list, limit 20", "service")], \
        figures[("GET page at 90% depth", "service")]
    out(f"depth: the service's page at 90% takes {deep[1] / first[1]:.2f}x its first page's "
        f"p50 ({deep[1]:.2f} ms vs {first[1]:.2f} ms)")
    for name in ("GET ordered page", "GET ordered, 90% deep"):
        ordered = figures[(name, "service")]
        out(f"order_by={ORDER_BY}: {name.removeprefix('GET ordered').strip(' ,') or 'first page'}"
            f" takes {ordered[1] / first[1]:.2f}x the unordered first page's p50 "
            f"(target <= {MAX_ORDERED:g}: {verdict(ordered[1] / first[1], MAX_ORDERED, False)})")
    if BEFORE in SERVERS:
        report_against(out, size, figures)


def report_against(out, size, figures):
    """The service against itself at --against's commit, route by route."""
    out(f"against {AGAINST[0]} ({AGAINST[1]}), in the same rounds:")
    out(f"{'route':<24}  {'before r/s':>10}{'p50 ms':>8}  {'after r/s':>10}{'p50 ms':>8}"
        f"  {'after/before':>12}  {'s/b before':>10}{'after':>7}")
    for route in size.routes:
        name = route["name"]
        before, after, bare = (figures[(name, s)] for s in (BEFORE, "service", "bare"))
        out(f"{name:<24}  {before[0]:>10.0f}{before[1]:>8.2f}  {after[0]:>10.0f}{after[1]:>8.2f}"
            f"  {after[0] / before[0]:>12.2f}  {before[0] / bare[0]:>10.2f}"
            f"{after[0] / bare[0]:>7.2f}")


def report_targets(out, size):
    """The N=100 targets, each figure next to its target."""
    figures = medians(size)
    out(f"\nTargets at N = {size.n:,}, {size.connections} connection"
        f"{'s' if size.connections > 1 else ''} (service/bare is of requests/s):")
    for name, target in RATIO_TARGETS.items():
        ratio = figures[(name, "service")][0] / figures[(name, "bare")][0]
        out(f"  {name:<24} service/bare {ratio:>5.2f}  target >= {target:.2f}  "
            f"{verdict(ratio, target, at_least=True)}")
    for name in FRAMEWORK_TARGETS:
        ratio = figures[(name, "service")][0] / figures[(name, "framework")][0]
        out(f"  {name:<24} service/frmwk {ratio:>4.2f}  target >= {MIN_SINGLE_RECORD_SF:.2f}  "
            f"{verdict(ratio, MIN_SINGLE_RECORD_SF, at_least=True)}")
    for route in size.routes if size.connections == 1 else ():  # (the tail's target is of one)
        _, p50, p99 = figures[(route["name"], "service")]
        out(f"  {route['name']:<24} p99/p50      {p99 / p50:>5.2f}  target <= {MAX_TAIL:.2f}  "
            f"{verdict(p99 / p50, MAX_TAIL, at_least=False)}")


def report_growth(out, sizes):
    """Each route's service p50 at every N over its p50 at the smallest."""
    smallest, largest = sizes[0].n, sizes[-1].n
    out(f"\nGrowth: the service's p50 at N over its p50 at N = {smallest:,} "
        f"(target: at N = {largest:,}, <= {MAX_GROWTH:g})")
    out(f"{'route':<24}" + "".join(f"{size.n:>10,}" for size in sizes) + "  target")
    for route in sizes[0].routes:
        name = route["name"]
        p50s = [medians(size)[(name, "service")][1] for size in sizes]
        growth = [p50 / p50s[0] for p50 in p50s]
        out(f"{name:<24}" + "".join(f"{g:>10.2f}" for g in growth)
            + f"  {verdict(growth[-1], MAX_GROWTH, at_least=False):<16}"
            + records_change(name, sizes[0], sizes[-1]))


def records_change(name, small, large):
    """A note when a route's answer holds fewer records at the smallest N (a
    page near the end, a filter with few matches): part of its growth is then
    the answer's size, not the estate's."""
    before, after = small.records[name], large.records[name]
    if before == after:
        return ""
    return f"(answer: {before} records at {small.n:,}, {after} at {large.n:,})"


@contextlib.contextmanager
def worktree_at(revision):
    """A checkout of `revision` beside this one (None: none), sharing its
    .venv; SERVERS gains the service at that commit while it lasts."""
    global AGAINST
    if not revision:
        yield None
        return
    git = ["git", "-C", ROOT]
    commit = subprocess.run(git + ["rev-parse", "--verify", f"{revision}^{{commit}}"],
                            capture_output=True, text=True, check=True).stdout.strip()
    subject = subprocess.run(git + ["log", "-1", "--format=%h %s", commit],
                             capture_output=True, text=True, check=True).stdout.strip()
    tree = tempfile.mkdtemp(prefix="inventory-bench-before-")
    subprocess.run(git + ["worktree", "add", "--detach", "-q", tree, commit], check=True)
    os.symlink(os.path.join(ROOT, ".venv"), os.path.join(tree, ".venv"))
    AGAINST, SERVERS[BEFORE] = (commit[:12], subject[:60]), SERVERS["service"]
    try:
        yield tree
    finally:
        del SERVERS[BEFORE]
        subprocess.run(git + ["worktree", "remove", "--force", tree], check=False)
        shutil.rmtree(tree, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--duration", type=int, default=3)
    parser.add_argument("--connections", default="1,4",
                        help="the load's kept-alive connections, each count a run of its own")
    parser.add_argument("--journal", choices=("on", "off"), default="on",
                        help="the service journaled in a data directory, as the Procfile runs it")
    parser.add_argument("--token", choices=("admin", "writer"), default="admin",
                        help="the bootstrap admin's token, or a writer's the store keeps")
    parser.add_argument("--against", metavar="REV",
                        help="also serve the service at this commit (a git worktree of it)")
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "latest.txt"),
                        help="where the report goes (a short run: not bench/latest.txt)")
    args = parser.parse_args()
    if args.rounds < 1 or args.duration < 1:
        parser.error("--rounds and --duration must be at least 1")
    if not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        parser.error(f"--out: no directory for {args.out}")  # before a long run, not after
    sizes = sorted(int(s) for s in args.sizes.split(","))
    connections = sorted({int(c) for c in args.connections.split(",")})
    if connections[0] < 1:
        parser.error("--connections must be at least 1")
    wrk = ensure_wrk()
    if not wrk:
        connections = [1]  # the Python client holds one connection
    load = {c: f"wrk, 1 thread, {c} kept-alive connection{'s' if c > 1 else ''}" if wrk
            else "Python client, 1 kept-alive connection" for c in connections}
    out = Report()
    out(f"# scripts/bench {shlex.join(sys.argv[1:])}  ({datetime.datetime.now():%Y-%m-%d %H:%M}, "
        f"{os.cpu_count()}-core machine, python {sys.version.split()[0]})")
    out(f"rounds: {args.rounds} of {args.duration:g} s per route and server, the servers' "
        "order rotating each round; medians shown; the service "
        f"{'journaled' if args.journal == 'on' else 'in memory (no journal)'}, asked by "
        f"{'the bootstrap admin' if args.token == 'admin' else 'a writer token'}; "
        f"load average {os.getloadavg()[0]:.1f} at the start")
    runs = []
    with worktree_at(args.against) as before_tree:
        for n in sizes:
            for run in bench_size(n, args.rounds, args.duration, wrk, connections,
                                  args.journal == "on", args.token, before_tree):
                runs.append(run)
                report_size(out, run, load[run.connections])
    for count in connections:
        of_count = [run for run in runs if run.connections == count]
        report_targets(out, next((run for run in of_count if run.n == TARGET_N), of_count[0]))
    report_growth(out, [run for run in runs if run.connections == connections[0]])
    out.write(args.out)


if __name__ == "__main__":
    main()
