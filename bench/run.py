"""The service against a bare-Flask baseline, in one run.

For each size N it seeds the embedded store with N records per collection,
starts the service under gunicorn (one worker, gunicorn.conf.py as the
Procfile uses it) and beside it a bare Flask app that answers the same routes
with the service's own answers, captured once. It drives both with the same
load (wrk, installed from Debian's packages when it can be; else a Python
client), alternating which goes first, and prints per route the median over
the rounds of requests/s, p50 and p99 latency, and service/baseline.

    scripts/bench [--sizes 100,1000,10000] [--rounds 3] [--duration 3]
"""
import argparse
import http.client
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GUNICORN = os.path.join(os.path.dirname(sys.executable), "gunicorn")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(port, method, path, body=None, token=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request(method, path, body=body, headers=headers)
    response = connection.getresponse()
    data = response.read()
    connection.close()
    return response.status, data


def start(module, port, env):
    process = subprocess.Popen(
        [GUNICORN, "-c", os.path.join(ROOT, "gunicorn.conf.py"), module],
        cwd=ROOT, env={**os.environ, **env, "PORT": str(port), "WEB_CONCURRENCY": "1",
                       "GUNICORN_TIMEOUT": "300"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            if call(port, "GET", "/healthz")[0] == 200:
                return process
        except OSError:
            time.sleep(0.2)
    process.kill()
    raise SystemExit(f"{module} did not start")


def ensure_wrk():
    if shutil.which("wrk"):
        return shutil.which("wrk")
    if shutil.which("apt-get") and os.geteuid() == 0:
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], capture_output=True,
                       env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    return shutil.which("wrk")


_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def _ms(text):
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * _UNITS[unit]


def measure_wrk(wrk, port, route, token, duration, workdir):
    command = [wrk, "-t1", "-c1", f"-d{int(duration)}s", "--latency",
               "-H", f"Authorization: Bearer {token}"]
    if route["method"] == "POST":
        script = os.path.join(workdir, "post.lua")
        with open(script, "w") as lua:
            lua.write(f'wrk.method = "POST"\nwrk.body = {json.dumps(route["body"])}\n'
                      'wrk.headers["Content-Type"] = "application/json"\n')
        command += ["-s", script]
    run = subprocess.run(command + [f"http://127.0.0.1:{port}{route['path']}"],
                         capture_output=True, text=True)
    output = run.stdout
    if "Requests/sec" not in output or "Non-2xx" in output or "Socket errors" in output:
        raise SystemExit(f"wrk failed on {route['name']} at port {port}:\n{output}{run.stderr}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)$", output, re.M).group(1))
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)$", output, re.M).group(1))
    return rps, p50, p99


def measure_python(port, route, token, duration):
    latencies, end = [], time.monotonic() + duration
    while time.monotonic() < end:
        started = time.perf_counter()
        call(port, route["method"], route["path"], route.get("body"), token)
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    return (len(latencies) / duration, latencies[len(latencies) // 2],
            latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))])


def discover_routes(port, token, n):
    """The bench's routes on this estate, with a continue token at 90% depth."""
    status, body = call(port, "GET", "/kubeclusters?limit=1", token=token)
    first = json.loads(body)["results"][0]
    status, body = call(port, "GET", "/kubeplatforms?limit=1", token=token)
    platform = json.loads(body)["results"][0]["name"]
    depth, seen, token_90 = int(n * 0.9), 0, ""
    while seen < depth:
        limit = min(100, depth - seen)
        query = f"/kubeclusters?limit={limit}" + (f"&continue={token_90}" if token_90 else "")
        page = json.loads(call(port, "GET", query, token=token)[1])
        seen += len(page["results"])
        token_90 = page["pagination"]["continue"]
    return [
        {"name": "GET list, limit 20", "method": "GET", "path": "/kubeclusters?limit=20"},
        {"name": "GET list, limit 100", "method": "GET", "path": "/kubeclusters?limit=100"},
        {"name": "GET one platform", "method": "GET", "path": f"/kubeplatforms/{platform}"},
        {"name": "GET one cluster by id", "method": "GET", "path": f"/kubeclusters/{first['id']}"},
        {"name": "POST a scan", "method": "POST", "path": f"/kubeclusters/{first['name']}/scans",
         "body": '{"scanned_on": 1700000000}'},
        {"name": "GET page at 90% depth", "method": "GET",
         "path": f"/kubeclusters?limit=20&continue={token_90}"},
    ]


def bench_size(n, rounds, duration, wrk):
    workdir = tempfile.mkdtemp(prefix="inventory-bench-")
    token_file = os.path.join(workdir, "token")
    service_port, baseline_port = free_port(), free_port()
    started = time.monotonic()
    service = start("bench.seeded_app:app", service_port,
                    {"BENCH_N": str(n), "BENCH_TOKEN_FILE": token_file})
    seeded_in = time.monotonic() - started
    baseline = None
    try:
        with open(token_file) as secret:
            token = secret.read().strip()
        routes = discover_routes(service_port, token, n)
        bodies = {}
        for route in routes:
            status, body = call(service_port, route["method"], route["path"], route.get("body"), token)
            assert 200 <= status < 300, (route, status, body[:300])
            bodies[f"{route['method']} {route['path']}"] = [status, body.decode()]
        bodies_file = os.path.join(workdir, "bodies.json")
        with open(bodies_file, "w") as out:
            json.dump(bodies, out)
        baseline = start("bench.baseline_app:app", baseline_port, {"BENCH_BODIES": bodies_file})

        def measure(port, route, seconds):
            if wrk:
                return measure_wrk(wrk, port, route, token, seconds, workdir)
            return measure_python(port, route, token, seconds)

        targets = {"service": service_port, "baseline": baseline_port}
        for route in routes:  # warm up both
            for port in targets.values():
                measure(port, route, 1)
        results = {(r["name"], t): [] for r in routes for t in targets}
        for round_ in range(rounds):
            order = ["service", "baseline"] if round_ % 2 == 0 else ["baseline", "service"]
            for route in routes:
                for target in order:
                    results[(route["name"], target)].append(measure(targets[target], route, duration))
        return routes, results, seeded_in
    finally:
        for process in (service, baseline):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
        shutil.rmtree(workdir, ignore_errors=True)


def median_of(samples):
    return tuple(statistics.median(s[i] for s in samples) for i in range(3))


def report(n, routes, results, seeded_in, load):
    print(f"\nN = {n} records per collection (seeded in {seeded_in:.1f} s); load: {load}")
    print(f"{'route':<24}{'service r/s':>12}{'p50 ms':>9}{'p99 ms':>9}"
          f"{'baseline r/s':>14}{'p50 ms':>9}{'p99 ms':>9}{'ratio':>8}")
    medians = {}
    for route in routes:
        service = median_of(results[(route["name"], "service")])
        baseline = median_of(results[(route["name"], "baseline")])
        medians[route["name"]] = service
        print(f"{route['name']:<24}{service[0]:>12.0f}{service[1]:>9.2f}{service[2]:>9.2f}"
              f"{baseline[0]:>14.0f}{baseline[1]:>9.2f}{baseline[2]:>9.2f}"
              f"{service[0] / baseline[0]:>8.2f}")
    first, deep = medians["GET list, limit 20"], medians["GET page at 90% depth"]
    print(f"depth: the page at 90% takes {deep[1] / first[1]:.2f}x the first page's p50 "
          f"({deep[1]:.2f} ms vs {first[1]:.2f} ms)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--duration", type=int, default=3)
    args = parser.parse_args()
    wrk = ensure_wrk()
    load = "wrk, 1 thread, 1 connection" if wrk else "Python client, 1 connection"
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}; "
          f"{args.rounds} alternating rounds of {args.duration:g} s per route; medians shown")
    for n in (int(s) for s in args.sizes.split(",")):
        routes, results, seeded_in = bench_size(n, args.rounds, args.duration, wrk)
        report(n, routes, results, seeded_in, load)


if __name__ == "__main__":
    main()
