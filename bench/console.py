"""What each console page costs beside the API call it mirrors, on the
embedded store at a seeded fleet (bench/seeding.py: N organizations,
platforms and clusters, N scans of the first cluster).

In process (Flask test client, no HTTP server, request log off), one
worker: a page signed in with a session (its cookie resolved to its token
on every request, the template rendered) and the API call that reads the
same data with a bearer token (JSON dumped). Medians (p50) of --rounds
after one warm-up. The goal: every page's p50 at 100,000 clusters within
100 ms. Appends its table to console.txt.

    .venv/bin/python -m bench.console [--sizes 100000] [--rounds 15]
"""
import argparse
import datetime
import logging
import os
import re
import statistics
import sys
import time
from urllib.parse import urlencode

from app import create_app
from bench.filter_cost import revision
from bench.seeding import seed
from inventory.config import Config
from inventory.ui import views
from inventory.ui.views import ENDING_SOONEST

KEPT_FOR = views.COUNTS_SECONDS

TOKEN = "bench"
GOAL_MS = 100
# page -> (the page's path, [the API calls that read what it shows])
PAGES = {
    "overview /ui/ (counts kept)": ("/ui/", [
        "/kubeclusters:summary?group_by=environment,support.status",
        "/kubeclusters:summary?group_by=readiness.status",
        "/kubeclusters:summary?group_by=version",
        "/kubeclusters:blockers",
        "/kubeclusters?" + urlencode({"limit": 10, **ENDING_SOONEST}),
        "/kubeclusters?limit=10&order_by=last_scanned_on",
        "/events?limit=10&order_by=occurred_on+desc"]),
    "clusters": ("/ui/clusters", ["/kubeclusters"]),
    "clusters, filter + order_by": (
        "/ui/clusters?filter=environment%3D%22production%22+AND+support.status%3D%22extended%22"
        "&order_by=version",
        ["/kubeclusters?filter=environment%3D%22production%22+AND+support.status%3D%22extended"
         "%22&order_by=version"]),
    "clusters, page 2 (continue)": (None, None),  # made from page 1's Next link
    "a cluster": ("/ui/clusters/cluster-00000", [
        "/kubeclusters/cluster-00000", "/kubeclusters/cluster-00000/scans",
        "/events?limit=20&order_by=occurred_on+desc&filter=subject%3D%22/kubeclusters/"
        "cluster-00000%22"]),
    "platforms": ("/ui/platforms", ["/kubeplatforms"]),
    "organizations": ("/ui/organizations", ["/organizations"]),
    "changes": ("/ui/changes?order_by=occurred_on+desc", ["/events?order_by=occurred_on+desc"]),
    "tokens (admin)": ("/ui/tokens", ["/tokens"]),
}


def timed(client, path, headers=None):
    started = time.perf_counter()
    response = client.get(path, headers=headers or {})
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{path}: {response.status_code} {response.get_data(True)[:400]}")
    return elapsed, response


def median(run, rounds):
    run()  # warm up
    return statistics.median(run() for _ in range(rounds))


def signed_in(app):
    client = app.test_client()
    form = client.get("/ui/sign-in").get_data(as_text=True)
    token = re.search(r'name="form_token" value="([^"]+)"', form).group(1)
    response = client.post("/ui/sign-in", data={"form_token": token, "token": TOKEN})
    assert response.status_code == 303, response.status_code
    return client


def measure(n, rounds):
    """{page: (page ms, API ms)}, and the seeding time."""
    app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN=TOKEN))
    logging.getLogger("inventory").setLevel(logging.WARNING)  # no log line per request
    store = app.extensions["inventory.store"]
    started = time.monotonic()
    seed(store, n)
    seeded_in = time.monotonic() - started
    for number in range(30):  # a feed to show: changes of the first cluster
        store.clusters.update("cluster-00000", {"description": f"change {number}"}, TOKEN)
    console, api = signed_in(app), app.test_client()
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    first = timed(console, "/ui/clusters?limit=20")[1].get_data(as_text=True)
    following = re.search(r'<a href="([^"]+)" rel="next">Next</a>', first).group(1)
    following = following.replace("&amp;", "&")
    token = re.search(r"continue=([^&]+)", following).group(1)
    pages = {**PAGES, "clusters, page 2 (continue)": (following, [
        f"/kubeclusters?limit=20&continue={token}"])}
    pages["overview /ui/, counting each time"] = pages["overview /ui/ (counts kept)"]
    found = {}
    for name, (page, calls) in pages.items():
        # the overview keeps its counts COUNTS_SECONDS; "counting each time" keeps none
        views.COUNTS_SECONDS = 0 if "counting" in name else KEPT_FOR
        page_ms = median(lambda page=page: timed(console, page)[0], rounds)
        each = [median(lambda call=call: timed(api, call, bearer)[0], rounds) for call in calls]
        found[name] = (page_ms, sum(each), each)
    return found, seeded_in


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="100000")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "console.txt"))
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    lines = [(f"# python -m bench.console --sizes {args.sizes} --rounds {args.rounds}  "
              f"(today {datetime.date.today()}; nproc {len(os.sched_getaffinity(0))}; "
              f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f}; "
              f"{revision()})"),
             "In process, embedded store, one worker; p50 ms of a console page (session, HTML) "
             "and of the API calls that read the same (bearer, JSON), summed; ratio = page / API."]
    for n in sizes:
        found, seeded_in = measure(n, args.rounds)
        print(f"N = {n}: seeded in {seeded_in:.1f} s", file=sys.stderr, flush=True)
        lines.append(f"N = {n:,} clusters{'':<20}{'page p50':>10}{'API p50':>10}{'ratio':>8}"
                     "   API calls")
        for name, (page_ms, api_ms, each) in found.items():
            lines.append(f"  {name:<36}{page_ms:>10.1f}{api_ms:>10.1f}{page_ms / api_ms:>8.2f}"
                         f"   {len(each)}" + (f" ({' + '.join(f'{ms:.1f}' for ms in each)})"
                                             if len(each) > 1 else ""))
        worst = max(found.items(), key=lambda item: item[1][0])
        lines.append(f"  slowest page: {worst[0]}, {worst[1][0]:.1f} ms: "
                     f"{'within' if worst[1][0] <= GOAL_MS else 'OVER'} the {GOAL_MS} ms goal")
    print("\n".join(lines))
    with open(args.out, "a") as out:
        out.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
