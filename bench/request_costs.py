# ruff: noqa: E402 - gevent patches the process before anything else is imported
"""CPU per request in process: the service, the framework floor and the bare
floor called as gunicorn calls a WSGI app (no sockets, no server), on the
bench's estate and routes. What the servers add is the same for all three,
so these figures show the apps' own costs; `--profile ROUTE` prints where a
route's time goes, by function (cProfile, cumulative).

    python -m bench.request_costs [--n 100] [--requests 3000] [--profile "GET one platform"]
    python -m bench.request_costs --layers      (each route's CPU by layer)
    python -m bench.request_costs --journal --admin   (as the Procfile serves: the store
        journaled in a data directory, the bootstrap admin asking)

The process is patched by gevent first, as gunicorn's gevent worker patches
it: its locks are then gevent's, which is what serving pays for.
"""
from gevent import monkey

monkey.patch_all()

import argparse
import cProfile
import io
import json
import logging
import os
import pstats
import sys
import tempfile
import time
from urllib.parse import urlsplit

from app import create_app
from bench.run import discover_routes
from bench.seeding import seed
from inventory.config import Config
from inventory.http import observability

ROUTES = ("GET list, limit 20", "GET platforms, limit 20", "GET one platform",
          "GET one cluster by id", "POST a scan", "GET filtered page")


def environ_of(method, path, body, token):
    url = urlsplit(path)
    payload = (body or "").encode()
    environ = {
        "REQUEST_METHOD": method, "SCRIPT_NAME": "", "PATH_INFO": url.path,
        "QUERY_STRING": url.query, "SERVER_NAME": "localhost", "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "localhost:8000",
        "wsgi.url_scheme": "http", "wsgi.version": (1, 0), "wsgi.errors": sys.stderr,
        "wsgi.multithread": False, "wsgi.multiprocess": False, "wsgi.run_once": False,
        "HTTP_ACCEPT": "application/json"}
    if token:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    if payload:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(payload))
    return environ, payload


def caller(app, token):
    """call(method, path, body=None) -> (status, body bytes), as a server would."""
    def call(method, path, body=None):
        environ, payload = environ_of(method, path, body, token)
        environ["wsgi.input"] = io.BytesIO(payload)
        status = []
        result = app(environ, lambda line, headers, exc_info=None: status.append(line))
        try:
            data = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()
        return int(status[0].split()[0]), data
    return call


def cpu_per_request(call, route, requests):
    """Microseconds of CPU per request, the best of three runs."""
    best = None
    for _ in range(3):
        started = time.process_time()
        for _ in range(requests):
            status, _ = call(route["method"], route["path"], route.get("body"))
        spent = (time.process_time() - started) / requests * 1e6
        if not 200 <= status < 300:
            raise SystemExit(f"{route['name']}: {status}")
        best = spent if best is None else min(best, spent)
    return best


# A request's layers, as cProfile finds them: (name, function path suffixes
# whose cumulative time is the layer's). The gate's ways in and out are named
# by their functions; "view" is the operation's own work (store, to_api, the
# dump, the JSON); Flask and werkzeug are the rest.
LAYERS = (
    ("request id, metrics, access line", ("observability.py(start_request)",
                                          "observability.py(finish_request)")),
    ("host, path and query checks", ("request_checks.py(refuse_unservable)",
                                     "response_headers.py(finish_response)")),
    ("rate and in-flight counts", ("rate_limits.py(enter)", "rate_limits.py(leave)",
                                   "rate_limits.py(close)")),
    ("token and role", ("auth.py(authenticate)",)),
    ("body", ("request_body.py(read_bounded_body)",)),
    ("idempotency", ("idempotency.py(reserve_or_replay)", "idempotency.py(keep_or_release)")),
    ("view: the store", ("store/base.py(get)", "store/base.py(list)", "scans/store.py(create)")),
    ("view: dump and JSON", ("dumping.py(dump)", "json/__init__.py(jsonify)")),
    ("view: arguments", ("webargs/core.py(parse)",)),
)


def layers(call, route, requests):
    """{layer: us of CPU a request}: cProfile's cumulative times of the
    layers' functions, scaled to the CPU the same requests take unprofiled."""
    real = cpu_per_request(call, route, requests)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(requests):
        call(route["method"], route["path"], route.get("body"))
    profiler.disable()
    stats = pstats.Stats(profiler).stats
    total = sum(timing[2] for timing in stats.values())  # every function's own time
    functions = [(f"{path}({function})", timing[3])
                 for (path, _line, function), timing in stats.items()]
    found = {}
    for layer, names in LAYERS:  # (a recursive function's outermost call: the largest)
        cumulative = sum(max([spent for function, spent in functions if function.endswith(name)],
                             default=0) for name in names)
        # the gate's closer, the token lookup: counted in the first layer that calls it
        found[layer] = cumulative / total * real
    found["Flask, werkzeug, flask-smorest"] = real - sum(found.values())
    return real, found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--profile", default=None)
    parser.add_argument("--layers", action="store_true")
    parser.add_argument("--journal", action="store_true",
                        help="journal the store in a data directory (process CPU: its threads too)")
    parser.add_argument("--admin", action="store_true",
                        help="ask as the bootstrap admin, not with a writer's stored token")
    args = parser.parse_args()

    # as served: the access line goes to a stream (the bench's servers write it to /dev/null)
    observability.configure_logging()
    logging.getLogger().handlers[0].stream = open(os.devnull, "w")  # noqa: SIM115
    admin = "bench-request-costs-admin-token-0123456789"
    service = create_app(Config(RATE_LIMIT="100000000 per minute", INVENTORY_ADMIN_TOKEN=admin,
                                INVENTORY_DATA_DIR=tempfile.mkdtemp(prefix="request-costs-")
                                if args.journal else None))
    token = seed(service.extensions["inventory.store"], args.n)
    token = admin if args.admin else token
    call = caller(service, token)
    routes = {route["name"]: route for route in discover_routes(call, args.n)}

    answers = {f"{r['method']} {r['path']}": [s, b.decode()] for r in routes.values()
               for s, b in [call(r["method"], r["path"], r.get("body"))]}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as bodies:
        json.dump(answers, bodies)
    os.environ["BENCH_BODIES"] = bodies.name
    from bench import baseline_app, framework_app
    floors = {"framework": caller(framework_app.create_app(answers), None),
              "bare": caller(baseline_app.app, None)}

    if args.profile:
        route = routes[args.profile]
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(args.requests):
            call(route["method"], route["path"], route.get("body"))
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(60)
        print(out.getvalue())
        return

    if args.layers:
        print(f"N = {args.n}; us of CPU a request by layer, in process (cProfile's shares "
              f"of the unprofiled CPU of {args.requests} requests)")
        names = ("GET one platform", "GET list, limit 20", "POST a scan")
        results = [layers(call, routes[name], args.requests) for name in names]
        print(f"{'layer':<34}" + "".join(f"{name:>20}" for name in names))
        for layer in results[0][1]:
            print(f"{layer:<34}" + "".join(f"{found[layer]:>20.0f}" for _, found in results))
        print(f"{'all':<34}" + "".join(f"{real:>20.0f}" for real, _ in results))
        return

    print(f"N = {args.n}; us of CPU a request, in process (best of 3 x {args.requests}); "
          f"{'journaled' if args.journal else 'no journal'}, "
          f"{'the bootstrap admin' if args.admin else 'a writer token'}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'route':<24}{'service':>9}{'framework':>11}{'bare':>7}{'s-f':>7}{'f/s':>7}")
    for name in ROUTES:
        route = routes[name]
        costs = [cpu_per_request(call, route, args.requests)] + [
            cpu_per_request(floor, route, args.requests) for floor in floors.values()]
        print(f"{name:<24}{costs[0]:>9.0f}{costs[1]:>11.0f}{costs[2]:>7.0f}"
              f"{costs[0] - costs[1]:>7.0f}{costs[1] / costs[0]:>7.2f}")


if __name__ == "__main__":
    main()
