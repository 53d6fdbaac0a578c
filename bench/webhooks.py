"""Webhooks' cost: what a write costs with 0, 10 and 100 webhooks subscribed
(each delivering every event to a local receiver), the delivery latency
after a commit, and what a black-holed receiver costs everyone else.

Served as the Procfile serves it (gunicorn.conf.py, the gevent worker, one
process, the embedded store in memory). One writer POSTs organizations in a
loop for --seconds; the write rate, its p50, and how far behind the
deliveries are at the end are printed per webhook count. Then, with one
webhook whose receiver never answers (10 s per attempt) beside one healthy
webhook, the healthy one's delivery latency and the writer's rate.

    .venv/bin/python -m bench.webhooks [--seconds 10] [--out bench/webhooks.txt]
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import time

from bench.run import call, free_ports, start, stop
from tests.support.receiver import Receiver

ADMIN = "bench-webhooks-admin-token"


def percentile(values, share):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * share))] if values else float("nan")


def writes(port, seconds):
    """(writes per second, p50 ms) of one writer POSTing organizations."""
    latencies, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.monotonic()
        status, _ = call(port, "POST", "/organizations", json.dumps({"title": "w"}), token=ADMIN)
        assert status == 201, status
        latencies.append(time.monotonic() - started)
    return len(latencies) / seconds, statistics.median(latencies) * 1000


def subscribe(port, url, count):
    for _ in range(count):
        status, body = call(port, "POST", "/webhooks", json.dumps({"url": url}), token=ADMIN)
        assert status == 201, body


def latency_after_commit(port, receiver, rounds=30):
    waits = []
    for _ in range(rounds):
        before, started = len(receiver.received), time.monotonic()
        call(port, "POST", "/organizations", json.dumps({"title": "l"}), token=ADMIN)
        while len(receiver.received) <= before and time.monotonic() - started < 30:
            time.sleep(0.002)
        waits.append((time.monotonic() - started) * 1000)
    return statistics.median(waits), percentile(waits, 0.99)


def run(seconds):
    lines = []
    env = {"INVENTORY_ADMIN_TOKEN": ADMIN, "INVENTORY_DATA_DIR": "",
           "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "RATE_LIMIT": "100000000 per minute"}
    lines.append("webhooks  writes/s  write p50 ms  delivered/expected at the end")
    for count in (0, 10, 100):
        (port,) = free_ports(1)
        process, receiver = start("app:app", port, env), Receiver()
        try:
            subscribe(port, receiver.url, count)
            rate, p50 = writes(port, seconds)
            time.sleep(2)
            expected = int(rate * seconds) * count
            lines.append(f"{count:8d}  {rate:8.1f}  {p50:12.2f}  "
                         f"{len(receiver.received)}/{expected}")
        finally:
            stop([process])
            receiver.close()
    (port,) = free_ports(1)
    process, healthy, hole = start("app:app", port, env), Receiver(), Receiver()
    hole.black_hole = True
    try:
        subscribe(port, healthy.url, 1)
        p50, p99 = latency_after_commit(port, healthy)
        lines.append(f"delivery after a commit, 1 webhook: p50 {p50:.0f} ms, p99 {p99:.0f} ms")
        subscribe(port, hole.url, 1)
        rate, write_p50 = writes(port, seconds)
        p50, p99 = latency_after_commit(port, healthy)
        lines.append(f"beside a black-holed receiver: the healthy one's delivery p50 {p50:.0f} ms, "
                     f"p99 {p99:.0f} ms; writes {rate:.1f}/s, p50 {write_p50:.2f} ms")
    finally:
        stop([process])
        healthy.close()
        hole.close()
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "webhooks.txt"))
    args = parser.parse_args()
    lines = run(args.seconds)
    load = os.getloadavg()[0]
    header = (f"# python -m bench.webhooks --seconds {args.seconds:g}  "
              f"({datetime.date.today()}; nproc {os.cpu_count()}; python "
              f"{sys.version.split()[0]}; load average {load:.1f})")
    text = "\n".join([header, *lines]) + "\n"
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n")


if __name__ == "__main__":
    main()
