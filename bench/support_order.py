"""What a page ordered by a support date costs, against one ordered by
version, and what keeping the support dates current costs, on the embedded
store at 10,000 and 100,000 clusters.

Pages (limit 20, in process through the Flask test client, request log
off): the first page of `order_by=support.all_ends_on`, `support.ends_on`
and `version` (the baseline: an order key kept since before), and a page
at the middle of the walk (its `continue` made from the middle record's
order key, as the page before it would have made it), unscoped. Medians of
--rounds after one warm-up.

Refreshes (ClusterStore.refresh_support_dates), timed once each:
- "the day after, nothing moved": a later day on which no minor's
  `ends_on` changes (a version-range query that finds nothing to write);
- "a day a minor moves": the day EKS 1.31's extended support ends, which
  rewrites those clusters (bench/seeding.py: four providers in turn,
  versions 1.28-1.32, so about a twentieth of N);
- "other lifecycle data, nothing differs": every cluster read, none written;
- "other lifecycle data, every date differs": every cluster rewritten.
Appends its table to support_order.txt.

    .venv/bin/python -m bench.support_order [--sizes 10000,100000] [--rounds 5]
"""
import argparse
import datetime
import os
import statistics
import sys
import time

from bench.filter_cost import revision
from bench.seeding import seeded_app
from inventory.core.lifecycle import LIFECYCLES, SUPPORT_DATE_FIELDS
from inventory.http.continuation import tokens
from inventory.resources.clusters.store import SUPPORT_DATES

ORDERS = ["support.all_ends_on", "support.ends_on", "version"]


def timed_page(client, query):
    started = time.perf_counter()
    response = client.get("/kubeclusters", query_string=query)
    elapsed = (time.perf_counter() - started) * 1000
    assert response.status_code == 200, response.get_data(True)[:400]
    assert len(response.get_json()["results"]) == 20
    return elapsed


def middle_token(app, store, order_by):
    """The `continue` of the page that ends at the middle record of the walk."""
    clusters = store.clusters
    field = clusters.order_field(clusters.orderings.resolve(order_by)[0])
    keys = sorted(doc[field] for doc in clusters.collection.find({}, {field: 1}))
    with app.test_request_context():
        return tokens().encode("kubeclusters@*", None, keys[len(keys) // 2],
                               clusters.orderings.resolve(order_by)[0].text)


def median(run, rounds):
    run()  # warm up
    return statistics.median(run() for _ in range(rounds))


def timed(run):
    started = time.perf_counter()
    done = run()
    return (time.perf_counter() - started) * 1000, done


def measure(n, rounds):
    app, store, client, seeded_in = seeded_app(n)
    found = {}
    for order_by in ORDERS:
        found[f"first page, order_by={order_by}"] = (
            median(lambda: timed_page(client, {"order_by": order_by}), rounds), "")
        token = middle_token(app, store, order_by)
        found[f"middle page, order_by={order_by}"] = (
            median(lambda: timed_page(client, {"order_by": order_by, "continue": token}),
                   rounds), "")
    clusters, cycle = store.clusters, LIFECYCLES.cycles["eks"]["1.31"]
    quiet_day = cycle.extended_ends - datetime.timedelta(days=3)
    clusters.refresh_support_dates(quiet_day - datetime.timedelta(days=2))
    ms, done = timed(lambda: clusters.refresh_support_dates(quiet_day))
    found["refresh: the day after, nothing moved"] = (ms, f"{done} rewritten")
    ms, done = timed(lambda: clusters.refresh_support_dates(cycle.extended_ends))
    found["refresh: a day a minor moves (EKS 1.31)"] = (ms, f"{done} rewritten")

    def other_data():
        store.db.settings.update_one({"_id": SUPPORT_DATES}, {"$set": {"data": "older"}})
        clusters._support_dates_for = None
        return clusters.refresh_support_dates(cycle.extended_ends)
    ms, done = timed(other_data)
    found["refresh: other data, nothing differs"] = (ms, f"{done} rewritten")
    # one write a cluster, by key (mongomock's update_many checks the unique
    # indexes against every document for each document it changes)
    for doc in clusters.collection.find({}, {"_id": 1}):
        clusters.collection.update_one({"_id": doc["_id"]}, {"$set": dict.fromkeys(
            SUPPORT_DATE_FIELDS.values(), "2000-01-01")})
    ms, done = timed(other_data)
    found["refresh: other data, every date differs"] = (ms, f"{done} rewritten")
    return found, seeded_in


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__),
                                                      "support_order.txt"))
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results = {}
    for n in sizes:
        results[n], seeded = measure(n, args.rounds)
        print(f"N = {n:,}: seeded in {seeded:.1f} s", file=sys.stderr, flush=True)
        for name, (ms, what) in results[n].items():
            print(f"  {name:<46}{ms:>10.1f} ms  {what}", file=sys.stderr, flush=True)
    lines = [(f"# python -m bench.support_order --sizes {args.sizes} --rounds {args.rounds}  "
              f"(today {datetime.date.today()}; nproc {len(os.sched_getaffinity(0))}; "
              f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f}; "
              f"{revision()})"),
             "In process, embedded store; pages: median ms; refreshes: ms, once.",
             f"{'':<46}" + "".join(f"{f'N={n:,}':>12}" for n in sizes) + "   at the largest N"]
    for name in results[sizes[0]]:
        lines.append(f"{name:<46}" + "".join(f"{results[n][name][0]:>12.1f}" for n in sizes)
                     + f"   {results[sizes[-1]][name][1]}")
    print("\n".join(lines))
    with open(args.out, "a") as out:
        out.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
