"""Webhooks' cost: what a write costs with 0, 10 and 100 webhooks subscribed
(each delivering every event to a local receiver), the delivery latency
after a commit, and what a black-holed receiver costs everyone else
(`--shape writes`, the default). `--shape others`: what other tenants'
webhooks that see nothing of a tenant's writes (their filters match nothing)
cost it, at 0, 20, 100 and 3,000 of them (150 tenants): the idle service's
CPU and /healthz (its worst answer is the longest the loop stalled), the
tenant's write rate, the service's CPU and journal bytes per write (CPU
holds its meaning on a machine others load too; rates and maxima do not),
and the rate achieved when it asks for 10 writes/s. `--shape black-holed`:
8 tenants with 20 webhooks each whose receivers never answer, writing,
beside a ninth tenant with one healthy webhook: how long its writes take to
arrive.

Served as the Procfile serves it (gunicorn.conf.py, the gevent worker, one
process, the embedded store in memory). One writer POSTs organizations in a
loop for --seconds; the write rate, its p50, and how far behind the
deliveries are at the end are printed per webhook count. Then, with one
webhook whose receiver never answers (10 s per attempt) beside one healthy
webhook, the healthy one's delivery latency and the writer's rate.

    .venv/bin/python -m bench.webhooks [--shape writes|others|black-holed]
        [--seconds 10] [--out bench/webhooks.txt]
"""
import argparse
import datetime
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
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
           "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "RATE_LIMIT": "100000000 per minute",
           "QUOTA_UNSCOPED_WEBHOOKS": "1000"}  # 100 webhooks of unscoped admins
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


def cpu_seconds(process):
    """CPU time (user and system) of gunicorn's master and its workers so
    far: what the service spent, whatever else the machine runs."""
    ticks = os.sysconf("SC_CLK_TCK")
    pids = [process.pid]
    try:
        with open(f"/proc/{process.pid}/task/{process.pid}/children") as children:
            pids += [int(pid) for pid in children.read().split()]
    except OSError:
        pass
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


def journal_bytes(directory):
    return sum(os.path.getsize(os.path.join(directory, name)) for name in os.listdir(directory)
               if name.startswith("journal-"))


def make_org(port, title):
    status, body = call(port, "POST", "/organizations", json.dumps({"title": title}), token=ADMIN)
    assert status == 201, body
    return json.loads(body)["id"]


def subscribe_org(port, org, url, count, filter=None):
    for _ in range(count):
        body = {"url": url, "organization": org, **({"filter": filter} if filter else {})}
        status, answer = call(port, "POST", "/webhooks", json.dumps(body), token=ADMIN)
        assert status == 201, answer


def healthz_stalls(port, seconds):
    """(max, p99) ms of /healthz asked every 10 ms on one connection."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    latencies, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        started = time.monotonic()
        connection.request("GET", "/healthz")
        connection.getresponse().read()
        latencies.append(time.monotonic() - started)
        time.sleep(0.01)
    connection.close()
    return max(latencies) * 1000, percentile(latencies, 0.99) * 1000


def paced_writes(port, seconds, rate):
    """(writes per second achieved, p50 ms) of one writer asking for `rate` a second."""
    latencies, started = [], time.monotonic()
    while (now := time.monotonic()) < started + seconds:
        due = started + len(latencies) / rate
        if now < due:
            time.sleep(due - now)
        began = time.monotonic()
        status, _ = call(port, "POST", "/organizations", json.dumps({"title": "p"}), token=ADMIN)
        assert status == 201, status
        latencies.append(time.monotonic() - began)
    return len(latencies) / (time.monotonic() - started), statistics.median(latencies) * 1000


def run_others(seconds, counts=(0, 20, 100, 3000)):
    """Other tenants' webhooks that see nothing of the writer's events."""
    lines = ["webhooks of others (tenants)  idle CPU ms/s  idle /healthz max/p99 ms  "
             "writes/s  write p50 ms  CPU ms/write  journal B/write  at 10/s: achieved, p50 ms"]
    for count in counts:
        (port,) = free_ports(1)
        with tempfile.TemporaryDirectory() as data:
            env = {"INVENTORY_ADMIN_TOKEN": ADMIN, "INVENTORY_DATA_DIR": data,
                   "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "RATE_LIMIT": "100000000 per minute",
                   "LOG_LEVEL": "WARNING"}
            process, receiver = start("app:app", port, env), Receiver()
            try:
                tenants = [make_org(port, f"tenant-{i}") for i in range((count + 19) // 20)]
                for index, org in enumerate(tenants):
                    subscribe_org(port, org, receiver.url, min(20, count - index * 20),
                                  'type="nothing.matches"')
                make_org(port, "warm")
                time.sleep(3)
                idle = cpu_seconds(process)
                time.sleep(seconds)
                idle = (cpu_seconds(process) - idle) / seconds * 1000
                stall_max, stall_p99 = healthz_stalls(port, seconds)
                before, cpu = journal_bytes(data), cpu_seconds(process)
                rate, p50 = writes(port, seconds)
                cpu = (cpu_seconds(process) - cpu) * 1000 / max(1, rate * seconds)
                per_write = (journal_bytes(data) - before) / max(1, rate * seconds)
                time.sleep(2)
                paced, paced_p50 = paced_writes(port, seconds, 10)
                lines.append(f"{count:8d} ({len(tenants):3d})  {idle:22.1f}  {stall_max:12.1f} / "
                             f"{stall_p99:5.1f}  {rate:8.1f}  {p50:12.2f}  {cpu:12.2f}  "
                             f"{per_write:15.0f}  {paced:5.1f}/s, {paced_p50:.1f}")
                print(lines[-1], flush=True)
            finally:
                stop([process])
                receiver.close()
    return lines


def run_black_holed(seconds, tenants=8, per_tenant=20):
    """`tenants` with `per_tenant` black-holed webhooks each, writing, beside
    a ninth tenant with one healthy webhook: its writes' delivery latency."""
    (port,) = free_ports(1)
    hole, healthy = Receiver(), Receiver()
    hole.black_hole = True
    with tempfile.TemporaryDirectory() as data:
        env = {"INVENTORY_ADMIN_TOKEN": ADMIN, "INVENTORY_DATA_DIR": data,
               "WEBHOOK_ALLOWED_HOSTS": "127.0.0.1", "RATE_LIMIT": "100000000 per minute",
               "LOG_LEVEL": "WARNING"}
        process = start("app:app", port, env)
        stopping = threading.Event()
        try:
            noisy = [make_org(port, f"noisy-{i}") for i in range(tenants)]
            for org in noisy:
                subscribe_org(port, org, hole.url, per_tenant)
            ninth = make_org(port, "ninth")
            subscribe_org(port, ninth, healthy.url, 1)

            def noise(org):
                turn = 0
                while not stopping.is_set():
                    turn += 1
                    call(port, "PATCH", f"/organizations/{org}",
                         json.dumps({"title": f"noise {turn}"}), token=ADMIN)
                    stopping.wait(0.5)
            writers = [threading.Thread(target=noise, args=(org,), daemon=True) for org in noisy]
            for writer in writers:
                writer.start()
            time.sleep(5)  # every slot taken
            waits, missed, deadline = [], 0, time.monotonic() + seconds
            turn = 0
            while time.monotonic() < deadline:
                turn += 1
                before, started = len(healthy.received), time.monotonic()
                call(port, "PATCH", f"/organizations/{ninth}",
                     json.dumps({"title": f"ninth {turn}"}), token=ADMIN)
                while len(healthy.received) <= before and time.monotonic() - started < 120:
                    time.sleep(0.005)
                if len(healthy.received) > before:
                    waits.append(time.monotonic() - started)
                else:
                    missed += 1
                time.sleep(1)
        finally:
            stopping.set()
            stop([process])
            hole.close()
            healthy.close()
    return [f"{tenants} tenants x {per_tenant} black-holed webhooks, writing every 0.5 s; a "
            f"ninth tenant's write to its delivery: {len(waits)} writes, p50 "
            f"{statistics.median(waits) * 1000:.0f} ms, max {max(waits) * 1000:.0f} ms"
            + (f", {missed} not delivered within 120 s" if missed else "")]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", choices=("writes", "others", "black-holed"),
                        default="writes")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "webhooks.txt"))
    args = parser.parse_args()
    lines = {"writes": run, "others": run_others,
             "black-holed": run_black_holed}[args.shape](args.seconds)
    load = os.getloadavg()[0]
    header = (f"# python -m bench.webhooks --shape {args.shape} --seconds {args.seconds:g}  "
              f"({datetime.date.today()}; nproc {os.cpu_count()}; python "
              f"{sys.version.split()[0]}; load average {load:.1f})")
    text = "\n".join([header, *lines]) + "\n"
    print(text)
    with open(args.out, "a") as out:
        out.write(text + "\n")


if __name__ == "__main__":
    main()
