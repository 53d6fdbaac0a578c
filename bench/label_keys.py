"""What Kubernetes label keys (`app.kubernetes.io/name`, stored escaped:
inventory.store.document_keys) cost against keys of old (`team`), in the
same run, on the embedded store.

In process (Flask test client, request log off), two estates of --clusters
clusters each: one whose clusters carry three plain keys (`team`, `tier`,
`owner`), one whose clusters carry three Kubernetes keys
(`app.kubernetes.io/name`, `topology.kubernetes.io/region`, `team`). For
each it times a list page of 100, a page filtered on a label, a summary
grouped by a label, a PATCH of one label (its event written and published)
and a page of 100 events: medians of --reps requests in CPU time of the
thread. Writes its table, with each Kubernetes figure's ratio to the plain
one, to label_keys.txt (appends with --append).

    .venv/bin/python -m bench.label_keys [--clusters 2000] [--reps 30]

The code measured is whatever `app` imports: with PYTHONPATH set to another
checkout, the figures before a change (only the plain estate: older code
refuses the Kubernetes keys, and the bench says so).
"""
import argparse
import datetime
import logging
import os
import statistics
import subprocess
import time

import app as app_module
from app import create_app
from bench import report
from inventory.config import Config

ADMIN = "bench-admin-token"
ESTATES = {
    "plain": lambda i: {"team": f"team-{i % 10}", "tier": "gold", "owner": "ops"},
    "kubernetes": lambda i: {"app.kubernetes.io/name": f"app-{i % 10}",
                             "topology.kubernetes.io/region": "eu-west-1", "team": f"team-{i % 10}"},
}
KEY = {"plain": "labels.team", "kubernetes": 'labels."app.kubernetes.io/name"'}
VALUE = {"plain": "team-1", "kubernetes": "app-1"}


def cpu_ms(call):
    start = time.thread_time()
    call()
    return (time.thread_time() - start) * 1000


def estate(kind, clusters):
    """A client of a fresh in-memory app holding `clusters` clusters; None
    when this code refuses the estate's keys."""
    app = create_app(Config(INVENTORY_ADMIN_TOKEN=ADMIN, TESTING=True,
                            QUOTA_CLUSTERS=clusters + 1))
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {ADMIN}"
    org = client.post("/organizations", json={"title": "Bench"}).get_json()["id"]
    client.post("/kubeplatforms", json={
        "name": "p", "organization": org, "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}})
    for i in range(clusters):
        made = client.post("/kubeclusters", json={
            "name": f"c{i:06d}", "platform": "p", "environment": "production",
            "version": "1.31.2", "labels": ESTATES[kind](i)})
        if made.status_code == 422:  # keys this code does not take
            return None
        assert made.status_code == 201, made.get_json()
    return client


def operations(kind):
    key, value = KEY[kind], VALUE[kind]
    label = "app.kubernetes.io/name" if kind == "kubernetes" else "team"
    counter = iter(range(10 ** 9))

    def ok(response):
        assert response.status_code == 200, response.get_json()
    return {
        "list page of 100": lambda c: ok(c.get("/kubeclusters?limit=100")),
        "filtered on a label": lambda c: ok(c.get(
            "/kubeclusters", query_string={"limit": 100, "filter": f'{key}="{value}"'})),
        "summary by a label": lambda c: ok(c.get(
            "/kubeclusters:summary", query_string={"group_by": key})),
        "PATCH of a label": lambda c: ok(c.patch(
            "/kubeclusters/c000001", json={"labels": {label: f"v{next(counter)}"}})),
        "events page of 100": lambda c: ok(c.get("/events?limit=100")),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clusters", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args()
    logging.getLogger("inventory.requests").setLevel(logging.WARNING)
    clients = {kind: estate(kind, args.clusters) for kind in ESTATES}
    figures = {}
    for kind, client in clients.items():
        if client is None:
            continue
        for name, call in operations(kind).items():
            call(client)  # warm
            figures[kind, name] = statistics.median(
                cpu_ms(lambda: call(client)) for _ in range(args.reps))
    code = os.path.dirname(os.path.abspath(app_module.__file__))  # the checkout measured
    try:
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                                text=True, cwd=code).stdout.strip() or "?"
    except OSError:
        commit = "?"
    lines = [f"## {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
             f"{args.clusters:,} clusters, medians of {args.reps} (CPU ms of the thread), "
             f"code at {commit} ({code})",
             "", "| operation | plain keys | Kubernetes keys | ratio |", "|---|---|---|---|"]
    for name in operations("plain"):
        plain, kube = figures.get(("plain", name)), figures.get(("kubernetes", name))
        lines.append(f"| {name} | {plain:.2f} | "
                     + (f"{kube:.2f} | {kube / plain:.2f}x |" if kube is not None else
                        "refused by this code | - |"))
    text = "\n".join(lines) + "\n"
    report("label_keys", text, args.append)


if __name__ == "__main__":
    main()
