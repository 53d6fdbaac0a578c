"""A scan's POST into a cluster holding SCAN_RETENTION_COUNT scans against one
into a cluster holding none (issue 26: within 1.1x).

In process, on the embedded store in memory, through the WSGI app as
gunicorn calls it (no test client), with a writer token and the default
retention count (1,000). The two clusters take turns, request by request;
each round times --batch POSTs into each, and the report gives the medians
of the rounds' per-request times (CPU time of this thread: others' load
does not inflate it) and their ratio. The full cluster stays at about its
count: each POST adds one, and its trims (once a tenth of the count) take
it back.

    .venv/bin/python -m bench.scan_depth [--rounds 30] [--batch 50]

Appends its report to bench/scan_depth.txt.
"""
import argparse
import datetime
import io
import logging
import os
import statistics
import sys
import time

from app import create_app
from inventory.config import Config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = "bench-scan-depth-admin"


def poster(app, token, cluster):
    environ = {"REQUEST_METHOD": "POST", "PATH_INFO": f"/kubeclusters/{cluster}/scans",
               "QUERY_STRING": "", "SERVER_NAME": "localhost", "SERVER_PORT": "80",
               "HTTP_HOST": "localhost", "SERVER_PROTOCOL": "HTTP/1.1",
               "wsgi.url_scheme": "http", "CONTENT_TYPE": "application/json",
               "CONTENT_LENGTH": "2", "HTTP_AUTHORIZATION": f"Bearer {token}",
               "REMOTE_ADDR": "127.0.0.1", "wsgi.errors": sys.stderr}
    statuses = []

    def start_response(status, headers, exc_info=None):
        statuses.append(status)

    def post():
        answer = app({**environ, "wsgi.input": io.BytesIO(b"{}")}, start_response)
        b"".join(answer)
        answer.close()
        if not statuses[-1].startswith("201"):
            raise SystemExit(f"POST into {cluster}: {statuses[-1]}")
    return post


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "scan_depth.txt"))
    args = parser.parse_args()
    app = create_app(Config(INVENTORY_ADMIN_TOKEN=ADMIN, RATE_LIMIT="100000000 per minute",
                            RATE_LIMIT_ORGANIZATION="100000000 per minute"))
    logging.getLogger("inventory.requests").disabled = True
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {ADMIN}"
    org = client.post("/organizations", json={"title": "t", "description": ""}).get_json()["id"]
    client.post("/kubeplatforms", json={
        "name": "platform", "organization": org, "title": "", "description": "",
        "control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}})
    for name in ("empty", "full"):
        client.post("/kubeclusters", json={"name": name, "platform": "platform",
                                           "environment": "dev", "version": "1.31.0"})
    token = client.post("/tokens", json={"name": "scanner", "role": "writer"}).get_json()["token"]
    store = app.extensions["inventory.store"]
    count = store.scans.retention_count
    full = poster(app, token, "full")
    for _ in range(count):
        full()
    empty = poster(app, token, "empty")
    times = {"empty": [], "full": []}
    for _ in range(args.rounds):
        for name, post in (("empty", empty), ("full", full)):
            if name == "empty":  # none again: its scans from the last round go
                store.scans.delete_under([store.clusters.get_doc("empty")])
            started = time.thread_time()
            for _ in range(args.batch):
                post()
            times[name].append((time.thread_time() - started) / args.batch * 1e6)
    held = store.scans.collection.count_documents(
        {"cluster": store.clusters.get_doc("full")["id"]})
    empty_us, full_us = statistics.median(times["empty"]), statistics.median(times["full"])
    ratio = full_us / empty_us
    text = "\n".join([
        f"# python -m bench.scan_depth --rounds {args.rounds} --batch {args.batch}  "
        f"({datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()} cores, "
        f"python {sys.version.split()[0]})",
        f"POST a scan into a cluster with none:        {empty_us:7.0f} us of CPU",
        f"POST a scan into a cluster with {count:,} scans: {full_us:7.0f} us of CPU "
        f"(it holds {held:,} now)",
        f"ratio {ratio:.2f} ({'within' if ratio <= 1.1 else 'OVER'} the 1.1x target)"])
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n\n")


if __name__ == "__main__":
    main()
