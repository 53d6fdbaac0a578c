"""What counting a request's rate costs over the wire (inventory.store.
rate_counters.SharedRateCounter), against one round trip to the same server
(a read by `_id`) and against the embedded store's dict counter, in the same run.

On MONGODB_URI's server (FerretDB, as scripts/wire starts it, or a MongoDB),
in a throwaway database (its `rate_windows` holding a handful of windows):
for each case, the median wall time of --reps requests counted, and the
round trips each made (commands the client sent,
counted by a pymongo command listener). The cases: a token's request (its
one default limit, 1000 a minute), an organization's token's (its own
limit, then its organization's share: two windows, the default most a
request counts), a request refused by its limit, and a caller's first
request of a window in a process (the previous window's count read once);
then a whole request through the app (Flask's test client): a GET of an
organization by one of its tokens, its rate counted in the database, and the
same GET with the app's counter swapped for the in-memory one.
Writes its table to rate_counters.txt (appends with --append).

    MONGODB_URI=mongodb://127.0.0.1:27017 .venv/bin/python -m bench.rate_counters [--reps 2000]

To run it on the FerretDB the wire suite uses: start `$(scripts/ferretdb)`
as scripts/wire does (`--handler=sqlite --sqlite-url=file:DIR/ --listen-addr=127.0.0.1:PORT
--state-dir=DIR --telemetry=disable`) and point MONGODB_URI at it.
"""
import argparse
import datetime
import logging
import os
import statistics
import subprocess
import time
import uuid

import pymongo
from pymongo import monitoring

from app import create_app
from bench import report
from inventory.config import Config
from inventory.store.rate_counters import LocalRateCounter, SharedRateCounter

# The defaults' shape (N per minute), N large enough that no rep is refused:
# what a request costs does not depend on N.
TOKEN, ORGANIZATION = ((10 ** 9, 60),), ((10 ** 9, 60),)
ADMIN = "bench-admin-token"


def served_get(uri, database):
    """A GET of an organization by one of its tokens, through the whole app
    (Flask's test client) on `database`; and the app's limits, whose counter
    the bench swaps."""
    app = create_app(Config(TESTING=True, MONGODB_URI=uri, MONGODB_DB=database,
                            INVENTORY_ADMIN_TOKEN=ADMIN, CONCURRENT_REQUESTS=0,
                            RATE_LIMIT="1000000000 per minute",
                            RATE_LIMIT_ORGANIZATION="1000000000 per minute"))
    app.extensions["inventory.store"].create_indexes()
    admin = app.test_client()
    admin.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {ADMIN}"
    org = admin.post("/organizations", json={"title": "Bench"}).get_json()["id"]
    token = admin.post("/tokens", json={"name": "bench", "role": "reader",
                                        "organization": org}).get_json()["token"]
    reader = app.test_client()
    reader.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"

    def get():
        assert reader.get(f"/organizations/{org}").status_code == 200
    return get, app.extensions["inventory.rate_limits"]


class Trips(monitoring.CommandListener):
    """Commands sent, counted."""

    def __init__(self):
        self.count = 0

    def started(self, event):
        self.count += 1

    def succeeded(self, event):
        pass

    def failed(self, event):
        pass


def measure(reps, call, trips, after=None):
    """(median microseconds, round trips a call) of `reps` calls, each
    followed by `after` (neither timed nor counted)."""
    call()  # warm
    times, sent = [], 0
    for _ in range(reps):
        before, start = trips.count, time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e6)
        sent += trips.count - before
        if after is not None:
            after()
    return statistics.median(times), sent / reps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=2000)
    parser.add_argument("--append", action="store_true")
    args = parser.parse_args()
    uri = os.environ.get("MONGODB_URI")
    if not uri:
        raise SystemExit("MONGODB_URI is needed: the server to measure on (see the docstring).")
    logging.getLogger("inventory.requests").setLevel(logging.WARNING)
    trips = Trips()
    monitoring.register(trips)  # every client's commands: the bench's and the app's
    client = pymongo.MongoClient(uri, appname="bench-rate-counters")
    db = client[f"bench_rates_{uuid.uuid4().hex[:8]}"]
    server = client.admin.command("buildInfo")
    server = (f"FerretDB {server['ferretdbVersion']}" if "ferretdbVersion" in server
              else f"MongoDB {server['version']}")
    try:
        db.probe.insert_one({"_id": "probe", "n": 0})
        counter, local = SharedRateCounter(db, fallback=False), LocalRateCounter()
        refused = ((1, 86400),)
        counter.hit(refused, "token:refused")  # its one request: every later one refused
        cases = {
            "one round trip (a read by _id), the baseline":
                lambda: db.probe.find_one({"_id": "probe"}),
            "a token's request (1 limit)": lambda: counter.hit(TOKEN, "token:a"),
            "an organization's token's request (2 limits)": lambda: (
                counter.hit(TOKEN, "token:b"), counter.hit(ORGANIZATION, "organization:o")),
            "a refused request": lambda: counter.hit(refused, "token:refused"),
            "a caller's first request of a window in a process": lambda: SharedRateCounter(
                db, fallback=False).hit(TOKEN, "token:new"),
            "embedded store: a dict of the process (2 limits)": lambda: (
                local.hit(TOKEN, "token:b"), local.hit(ORGANIZATION, "organization:o")),
        }
        # the first request's window gone after each (so each is a first), and
        # the collection as small as the others': FerretDB's writes read it whole
        afters = {"a caller's first request of a window in a process":
                  lambda: db.rate_windows.delete_many({"_id": {"$regex": "token:new$"}})}
        figures = {name: measure(args.reps, call, trips, afters.get(name))
                   for name, call in cases.items()}
        get, limits = served_get(uri, f"{db.name}_app")
        figures["a GET of one organization by its token, counted in the database (2 limits)"] = \
            measure(args.reps, get, trips)
        limits.counter = LocalRateCounter()
        figures["the same GET, counted in the process's memory"] = measure(args.reps, get, trips)
    finally:
        client.drop_database(db.name)
        client.drop_database(f"{db.name}_app")
        client.close()
    baseline = figures["one round trip (a read by _id), the baseline"][0]
    try:
        commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                                text=True, cwd=os.path.dirname(os.path.abspath(__file__))
                                ).stdout.strip() or "?"
    except OSError:
        commit = "?"
    lines = [f"## {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, {server}, "
             f"medians of {args.reps} (wall us), code at {commit}",
             "", "| counted | us | round trips | ratio to one round trip |", "|---|---|---|---|"]
    for name, (micros, per_call) in figures.items():
        lines.append(f"| {name} | {micros:.0f} | {per_call:.2f} | {micros / baseline:.2f}x |")
    text = "\n".join(lines) + "\n"
    report("rate_counters", text, args.append)


if __name__ == "__main__":
    main()
