"""What the change feed costs, on the embedded store.

1. A write with its event against the same write without (the resource
   stores' `events` switched off), in process (Flask test client, request log
   off), with --events events already in the feed: a scan's POST, a cluster's
   PATCH, a cluster's create. Target: at most 1.3x.
2. How soon a wait answers after a commit, served by gunicorn exactly as the
   Procfile runs it (gevent): a client waits (`GET /events?after=..&wait=30`)
   while another posts a scan; the time from the scan's 201 to the wait's
   answer, over --waits tries. Target: about 100 ms.
3. Ordinary requests with the maximum of streams connected: the p50 of an
   authenticated GET with no stream, then with --streams Server-Sent Events
   streams open and idle. Target: at most 10 % slower.

    .venv/bin/python -m bench.events [--events 10000] [--waits 30] [--streams 500]

Appends its report to bench/events.txt.
"""
import argparse
import datetime
import logging
import os
import socket
import statistics
import threading
import time

from app import create_app
from inventory.config import Config
from tests.support.served import Gunicorn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKEN = "bench-events-token"


def _app():
    app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN=TOKEN))
    logging.getLogger("inventory.requests").disabled = True
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {TOKEN}"
    return app, client


def _timed(fn, rounds):
    samples = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - began)
    return statistics.median(samples) * 1000


def write_costs(events, rounds=300):
    """{write: (ms with its event, ms without)} at `events` events in the feed."""
    app, client = _app()
    store = app.extensions["inventory.store"]
    org = client.post("/organizations", json={"title": "Bench"}).get_json()["id"]
    client.post("/kubeplatforms", json={"name": "p", "organization": org,
                                        "control_plane": {"provider": "eks"},
                                        "infrastructure": {"cloud": {"provider": "aws"}}})
    client.post("/kubeclusters", json={"name": "c", "platform": "p", "environment": "e",
                                       "version": "1.30"})
    while store.events.collection.count_documents({}) < events:
        for _ in range(500):
            client.post("/kubeclusters/c/scans", json={})
    counter = iter(range(10 ** 9))
    writes = {
        "POST a scan": lambda: client.post("/kubeclusters/c/scans", json={}),
        "PATCH a cluster": lambda: client.patch(
            "/kubeclusters/c", json={"title": f"t{next(counter)}"}),
        "POST a cluster": lambda: client.post("/kubeclusters", json={
            "name": f"n{next(counter)}", "platform": "p", "environment": "e",
            "version": "1.30"}),
    }
    costs = {}
    for name, write in writes.items():
        with_event = _timed(write, rounds)
        for resource in store.listed():
            resource.events = None
        without = _timed(write, rounds)
        for resource in store.listed():
            resource.events = store.events
        costs[name] = (with_event, without)
    return costs


def wait_latencies(served, tries):
    """Seconds from a commit's answer to a waiting reader's answer."""
    org = served.request("POST", "/organizations", {"title": "Waits"}).body["id"]
    served.request("POST", "/kubeplatforms", {"name": "pw", "organization": org,
                                           "control_plane": {"provider": "eks"},
                                           "infrastructure": {"cloud": {"provider": "aws"}}})
    served.request("POST", "/kubeclusters", {"name": "cw", "platform": "pw", "environment": "e",
                                          "version": "1.30"})
    latencies = []
    for _ in range(tries):
        after = _newest(served)
        answered = {}

        def waiter():
            served.request("GET", f"/events?after={after}&wait=30", timeout=60)
            answered["at"] = time.perf_counter()
        thread = threading.Thread(target=waiter)
        thread.start()
        time.sleep(0.2)  # the waiter is waiting
        served.request("POST", "/kubeclusters/cw/scans", {})
        committed = time.perf_counter()
        thread.join()
        latencies.append(answered["at"] - committed)
    return latencies


def _newest(served):
    after = None
    while True:
        page = served.request("GET", f"/events?limit=100{f'&after={after}' if after else ''}")
        if not page.body["results"]:
            return after
        after = page.body["results"][-1]["id"]


def get_p50(served, rounds=400):
    samples = []
    for _ in range(rounds):
        began = time.perf_counter()
        served.request("GET", "/kubeclusters/cw")
        samples.append(time.perf_counter() - began)
    return statistics.median(samples) * 1000


def open_streams(served, count):
    """`count` watchers following the feed from its newest event, as a
    dashboard that has caught up does."""
    newest, sockets = _newest(served), []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", served.port))
        sock.sendall((f"GET /events HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer "
                      f"{TOKEN}\r\nAccept: text/event-stream\r\nLast-Event-ID: {newest}"
                      "\r\n\r\n").encode())
        sockets.append(sock)
    time.sleep(3)
    accepted = 0
    for sock in sockets:
        sock.settimeout(2)
        try:
            accepted += sock.recv(200).startswith(b"HTTP/1.1 200")
        except OSError:
            pass
    return sockets, accepted


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=10000)
    parser.add_argument("--waits", type=int, default=30)
    parser.add_argument("--streams", type=int, default=500)
    args = parser.parse_args()
    lines = [f"# bench/events.py --events {args.events} --waits {args.waits} --streams "
             f"{args.streams}  ({datetime.datetime.now():%Y-%m-%d %H:%M}, {os.cpu_count()}-core "
             "machine)"]
    lines.append(f"1. writes with their event over writes without, {args.events} events "
                 "in the feed (in process, p50 ms):")
    for name, (with_event, without) in write_costs(args.events).items():
        lines.append(f"   {name:<16} {with_event:6.2f} vs {without:6.2f}  "
                     f"{with_event / without:4.2f}x  (target <= 1.3x)")
    served = Gunicorn(TOKEN, env={"LOG_LEVEL": "WARNING"})
    try:
        latencies = sorted(wait_latencies(served, args.waits))
        lines.append(f"2. a wait answers after a commit (served, gevent): p50 "
                     f"{statistics.median(latencies) * 1000:.1f} ms, max "
                     f"{latencies[-1] * 1000:.1f} ms over {len(latencies)} (target ~100 ms)")
        quiet = get_p50(served)
        sockets, accepted = open_streams(served, args.streams)
        loaded = get_p50(served)
        lines.append(f"3. GET one cluster p50: {quiet:.2f} ms with no stream, {loaded:.2f} ms "
                     f"with {accepted} streams open ({loaded / quiet:.2f}x; target <= 1.10x)")
        for sock in sockets:
            sock.close()
    finally:
        served.stop()
    report = "\n".join(lines)
    print(report)
    with open(os.path.join(ROOT, "bench", "events.txt"), "a") as out:
        out.write(report + "\n\n")


if __name__ == "__main__":
    main()
