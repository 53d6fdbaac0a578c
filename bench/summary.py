"""What a fleet summary, and a page filtered by `support.status`, cost on
the embedded store at 1,000 / 10,000 / 100,000 clusters.

The requirement: at 100,000 clusters a summary answers within 0.5 s on the
2-core machine. A summary counts every matching cluster, so it is one pass
over the clusters (inventory/embedded/counting.py answers the store's
`$match` + `$group` itself rather than through mongomock's aggregation
engine), and it holds the store's lock for that pass: the "lock held" row
is the pass alone (what the store's aggregation does under the lock, timed
directly), which is how long every other request waits behind one summary.

In process (Flask test client, no HTTP server, request log off), on N
seeded clusters (bench/seeding.py: four providers in turn, versions
1.28-1.32, three environments, ten teams), medians of --rounds after one
warm-up; "today" is the real day, written in the header. Appends its table
to summary.txt.

    .venv/bin/python -m bench.summary [--sizes 1000,10000,100000] [--rounds 5]
"""
import argparse
import datetime
import logging
import os
import statistics
import sys
import time
from urllib.parse import urlencode

from app import create_app
from bench.filter_cost import revision
from bench.seeding import seed
from inventory.config import Config
from inventory.core import filtering, grouping
from inventory.embedded.counting import _everything, count_by_fields
from inventory.embedded.lock import LOCK
from inventory.embedded.matching import matcher
from inventory.resources.clusters.spec import SPEC as CLUSTERS

SUMMARIES = {  # name -> (group_by, filter)
    "summary by support.status": ("support.status", None),
    "by environment, version, support.status": ("environment,version,support.status", None),
    "by labels.team, provider; env=production": ("labels.team,control_plane.provider",
                                                 'environment="production"'),
    "by version; support.status!=supported": ("version", 'support.status!="supported"'),
    "by organization (100% distinct groups)": ("organization", None),
}
PAGES = {  # name -> query of GET /kubeclusters
    "page: support.status=extended AND env": {
        "filter": 'support.status="extended" AND environment="production"', "limit": 20},
    "page: the same, order_by=version": {
        "filter": 'support.status="extended" AND environment="production"', "limit": 20,
        "order_by": "version"},
    "page: no filter (baseline)": {"limit": 20},
}


def timed(client, path, query, token="bench"):
    started = time.perf_counter()
    # closed once read: the answer holds one of the caller's in-flight
    # slots until then (a fifth unclosed answer is a 429)
    with client.get(f"{path}?{urlencode(query)}",
                    headers={"Authorization": f"Bearer {token}"}) as response:
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise SystemExit(f"{path} {query}: {response.status_code} "
                             f"{response.get_data(True)[:400]}")
        return elapsed, response.get_json()


def median(run, rounds):
    run()  # warm up
    return statistics.median(run() for _ in range(rounds))


def measure(n, rounds):
    """{name: (ms, what came back)}, and the seeding time."""
    app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN="bench"))
    logging.getLogger("inventory").setLevel(logging.WARNING)  # no log line per request
    store = app.extensions["inventory.store"]
    started = time.monotonic()
    seed(store, n)
    seeded_in, client, found = time.monotonic() - started, app.test_client(), {}
    for name, (group_by, text) in SUMMARIES.items():
        query = {"group_by": group_by, **({"filter": text} if text else {})}
        body = timed(client, "/kubeclusters:summary", query)[1]
        found[name] = (median(lambda: timed(client, "/kubeclusters:summary", query)[0], rounds),
                       f"{len(body['groups'])} groups, {body['total']} clusters")
    # the pass alone, under the store's lock: the unfiltered summary's aggregation
    tree, fields = None, grouping.parse("environment,version,support.status", CLUSTERS.group_fields)
    collection = store.clusters.collection
    calls = []
    original = collection.aggregate

    def recording(pipeline, **kwargs):
        calls.append(pipeline)
        return original(pipeline, **kwargs)
    collection.aggregate = recording
    store.clusters.summary(tree, fields)
    collection.aggregate = original
    pipeline = calls[0]

    query, paths, _ = count_by_fields(pipeline)

    def locked():  # what LockedCollection.aggregate does under the lock
        began = time.perf_counter()
        with LOCK:
            collection._counts(matcher(query), [(_everything, paths)])
        return (time.perf_counter() - began) * 1000
    found["lock held: one pass (by env, version, status)"] = (median(locked, rounds), "")
    filtered = filtering.parse('support.status!="supported"')
    store.clusters.summary(filtered, ("version",))  # (compiles like the route does)
    org = store.organizations.collection.find_one({})["_id"]
    _, secret = store.tokens.create({"name": "dash", "role": "reader", "organization": org},
                                    "bench")
    query = {"group_by": "environment,version,support.status"}
    found["summary, scoped token (1 organization)"] = (
        median(lambda: timed(client, "/kubeclusters:summary", query, secret)[0], rounds),
        f"{timed(client, '/kubeclusters:summary', query, secret)[1]['total']} clusters")
    for name, query in PAGES.items():
        body = timed(client, "/kubeclusters", query)[1]
        found[name] = (median(lambda: timed(client, "/kubeclusters", query)[0], rounds),
                       f"{len(body['results'])} results"
                       + (", more" if body["pagination"]["continue"] else ""))
    return found, seeded_in


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "summary.txt"))
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results, seeded = {}, {}
    for n in sizes:
        results[n], seeded[n] = measure(n, args.rounds)
        print(f"N = {n}: seeded in {seeded[n]:.1f} s", file=sys.stderr, flush=True)
        for name, (ms, what) in results[n].items():
            print(f"  {name:<46}{ms:>9.1f} ms  {what}", file=sys.stderr, flush=True)
    names = list(results[sizes[0]])
    lines = [(f"# python -m bench.summary --sizes {args.sizes} --rounds {args.rounds}  "
              f"(today {datetime.date.today()}; nproc {len(os.sched_getaffinity(0))}; "
              f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f}; "
              f"{revision()})"),
             "In process, embedded store; median ms; growth = ms at N over ms at the first N.",
             f"{'':<46}" + "".join(f"{f'N={n:,}':>12}" for n in sizes)
             + "".join(f"{f'x at {n:,}':>12}" for n in sizes[1:]) + "   at the largest N"]
    for name in names:
        cells = [results[n][name][0] for n in sizes]
        lines.append(f"{name:<46}" + "".join(f"{ms:>12.1f}" for ms in cells)
                     + "".join(f"{ms / cells[0]:>12.1f}" for ms in cells[1:])
                     + f"   {results[sizes[-1]][name][1]}")
    worst = max(results[sizes[-1]][name][0] for name in names if name in SUMMARIES)
    lines.append(f"slowest summary at N = {sizes[-1]:,}: {worst:.1f} ms: "
                 f"{'within' if worst <= 500 else 'OVER'} the 500 ms budget")
    print("\n".join(lines))
    with open(args.out, "a") as out:
        out.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
