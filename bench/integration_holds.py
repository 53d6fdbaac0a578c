"""How long an integration's call holds the worker's loop at 100,000
clusters, measured in the process's own CPU time: the longest stretch of
the request's thread CPU time between two points where it lets others run
(the store's long walks' and inventory/core/turns.py's). Unlike
bench/envelope.py's probe, this reads the same on a machine that other
work keeps busy; the probe's figures are the ones the promise (50 ms) is
about, on a quiet machine.

The estate: `flask seed`'s shape in memory (no scans), 100,000 clusters in
20 teams, the clusters of `team-1` (5,000) with an `endpoint`; the
collector frozen after it, as the service's start does. Each call runs
three times; all three figures are shown. Appends its table to
integration_holds.txt. Runs on the code before inventory/core/turns.py
too (then only the store's walks let others run).

    .venv/bin/python -m bench.integration_holds
"""
import datetime
import gc
import logging
import os
import time

import inventory.embedded.lock as embedded_lock
from app import create_app
from bench.filter_cost import revision
from inventory.cli import seed
from inventory.config import Config

TOKEN = "bench-integration-holds-token"
TEAM = 'labels.team="team-1"'
TWO_TEAMS = 'labels.team="team-1" OR labels.team="team-2"'


def estate(app):
    store = app.extensions["inventory.store"]
    with app.app_context():
        for name, batch in seed.estate(store, 100_000, 0, 1000, "bench"):
            for doc in batch:
                if name == "clusters" and doc["labels"]["team"] == "team-1":
                    doc["endpoint"] = f"https://api.{doc['_id']}.example.com:6443"
            if batch:
                store.db[name].insert_many(batch, ordered=True)
    gc.collect()
    gc.freeze()


def main():
    logging.disable(logging.INFO)  # the request log is not what is measured
    app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN=TOKEN))
    estate(app)
    yields = []

    def let_others_run():
        yields.append(time.thread_time())
        time.sleep(0)
    embedded_lock.yield_to_others = let_others_run
    try:
        from inventory.core import turns
        turns.let_others_run = let_others_run
    except ImportError:  # before it existed
        pass
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {TOKEN}"

    def argocd(filter_text):
        body = {"applicationSetName": "bench",
                "input": {"parameters": {"filter": filter_text} if filter_text else {}}}
        return lambda: client.post("/integrations/argocd/api/v1/getparams.execute", json=body)

    def prometheus(filter_text):
        query = {"filter": filter_text} if filter_text else {}
        return lambda: client.get("/integrations/prometheus/targets", query_string=query)
    lines = [f"# python -m bench.integration_holds  ({datetime.datetime.now():%Y-%m-%d %H:%M}, "
             f"{revision()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; 100,000 "
             "clusters, 5,000 with an endpoint)",
             f"{'call':<52} {'status':>6}  longest CPU stretch between yields, ms (3 runs)"]
    for name, call in (("Argo CD, one team (5,000 clusters)", argocd(TEAM)),
                       ("Argo CD, every cluster (a 422 past 10,000)", argocd(None)),
                       ("Argo CD, two teams (10,000: the most answered)", argocd(TWO_TEAMS)),
                       ("Prometheus, one team (5,000 with an endpoint)", prometheus(TEAM)),
                       ("Prometheus, every cluster (5,000 with an endpoint)", prometheus(None))):
        longest = []
        for _ in range(3):
            yields.clear()
            start = time.thread_time()
            status = call().status_code
            points = [start, *yields, time.thread_time()]
            longest.append(max(b - a for a, b in zip(points, points[1:])) * 1000)
        lines.append(f"{name:<52} {status:>6}  " + ", ".join(f"{ms:.1f}" for ms in longest))
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(os.path.dirname(__file__), "integration_holds.txt"), "a") as out:
        out.write(text + "\n\n")


if __name__ == "__main__":
    main()
