# ruff: noqa: E402 - gevent patches the process before anything else is imported
"""What each fast path of the embedded store buys, on the routes it was made
for: CPU per request in process, with the path on and then off (put back to
mongomock's own operation by patching the class in this process: what a
local edit turning it off would do), the two taking turns round by round,
medians of the rounds.

Each fast path relies on mongomock's private internals
(inventory/embedded/mongomock_internals.py): its documents dict, its TTL
indexes, its stored form. docs/decisions.md ("Fast paths in the embedded
store") keeps a path only where it buys at least 10% on its route.

    .venv/bin/python -m bench.embedded_fast_paths [--n 10000] [--requests 100] [--rounds 5]
        [--only NAME] [--journal]

The process is patched by gevent first, as gunicorn's gevent worker patches it.
"""
from gevent import monkey

monkey.patch_all()

import argparse
import contextlib
import logging
import os
import statistics
import sys
import tempfile
import time

from app import create_app
from bench.request_costs import caller
from bench.run import discover_routes
from bench.seeding import seed
from inventory.config import Config
from inventory.embedded import counting, mongomock_internals
from inventory.embedded.documents import copy_stored
from inventory.embedded.expiry import Expiry
from inventory.embedded.key_index import KeyIndex
from inventory.embedded.lock import LOCK
from inventory.embedded.reads import Reads
from inventory.embedded.writes import Writes
from inventory.http import observability


def _mongomock_find_one(self, filter, projection, copied):
    with LOCK:
        self._expire()
        return self._collection.find_one(filter, projection)


def _mongomock_find(self, filter, projection, sort, limit, skip, kwargs, copied):
    with LOCK:
        self._expire()
        return list(self._collection.find(filter, projection, sort=sort, limit=limit,
                                          skip=skip, **kwargs))


def _mongomock_sweep(self):
    """mongomock's own expiry: a look at every document of the collection."""
    mongomock_internals.collection_store(self._collection)._remove_expired_documents()


@contextlib.contextmanager
def patched(target, **attributes):
    saved = {name: target.__dict__[name] for name in attributes}
    for name, value in attributes.items():
        setattr(target, name, value)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(target, name, value)


@contextlib.contextmanager
def reads_by_key_off(database):
    """Reads by key and pages walked in order: mongomock's find and find_one."""
    with patched(Reads, _find_one=_mongomock_find_one, _find=_mongomock_find):
        yield


@contextlib.contextmanager
def counts_off(database):
    """Counts by fields (summaries): mongomock's aggregation."""
    with patched(counting, count_by_fields=lambda pipeline: None,
                 _faceted_counts=lambda pipeline: None):
        yield


@contextlib.contextmanager
def writes_by_key_off(database):
    """Updates and deletes by key: mongomock's update and delete."""
    with patched(KeyIndex, _keys_by_id=lambda self, query, ranges=False: None):
        yield


@contextlib.contextmanager
def inserts_by_key_off(database):
    """Inserts whose unique keys a lookup checks (`as_stored`): mongomock's insert."""
    with patched(Writes, _unique_by_key=lambda self, document: False):
        yield


@contextlib.contextmanager
def expiry_off(database):
    """TTL taken over (`ttl_indexes`): mongomock's TTL indexes put back, and
    its sweep over every document on each access."""
    stores = [mongomock_internals.collection_store(collection._collection)
              for collection in database._collections.values() if collection._ttl]
    for store in stores:
        ttl = mongomock_internals.ttl_indexes(store)
        ttl.update({name: index for name, index in store.indexes.items()
                    if index.get("expireAfterSeconds") is not None})
    try:
        with patched(Expiry, _expire=_mongomock_sweep):
            yield
    finally:
        for store in stores:
            mongomock_internals.ttl_indexes(store).clear()


@contextlib.contextmanager
def stored_form_off(database):
    """An insert's stored form in one walk (`as_stored`): a copy, then
    mongomock's own `patch_datetime_awareness_in_document` over it."""
    from mongomock_ng import helpers

    def as_stored(document):
        return helpers.patch_datetime_awareness_in_document(copy_stored(document))
    with patched(mongomock_internals, as_stored=as_stored):
        yield


FAST_PATHS = {  # name: (off switch, routes)
    "reads by key": (reads_by_key_off, ("GET one cluster by id", "GET list, limit 20",
                                        "GET ordered page")),
    "counts by fields": (counts_off, ("GET summary by environment",)),
    "writes by key": (writes_by_key_off, ("POST a scan", "PATCH a cluster")),
    "inserts by key": (inserts_by_key_off, ("POST a scan",)),
    "expiry taken over": (expiry_off, ("POST a scan",)),
    "stored form in one walk": (stored_form_off, ("POST a scan",)),
}


def cpu_per_request(call, route, requests):
    started = time.process_time()
    for i in range(requests):
        body = route.get("body")
        if callable(body):
            body = body(i)
        status, answer = call(route["method"], route["path"], body)
        if not 200 <= status < 300:
            raise SystemExit(f"{route['name']}: {status} {answer[:300]!r}")
    return (time.process_time() - started) / requests * 1e6


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--only", default="")
    parser.add_argument("--journal", action="store_true")
    args = parser.parse_args()
    observability.configure_logging()
    logging.getLogger().handlers[0].stream = open(os.devnull, "w")  # noqa: SIM115
    admin = "bench-fast-paths-admin-token-0123456789"
    app = create_app(Config(RATE_LIMIT="100000000 per minute", INVENTORY_ADMIN_TOKEN=admin,
                            INVENTORY_DATA_DIR=tempfile.mkdtemp(prefix="fast-paths-")
                            if args.journal else None))
    store = app.extensions["inventory.store"]
    seed(store, args.n)
    call = caller(app, admin)
    routes = {route["name"]: route for route in discover_routes(call, args.n)}
    cluster = routes["GET one cluster by id"]["path"]
    routes["PATCH a cluster"] = {"name": "PATCH a cluster", "method": "PATCH", "path": cluster,
                                 "body": lambda i: '{"labels": {"n": "%d"}}' % i}
    routes["GET summary by environment"] = {
        "name": "GET summary by environment", "method": "GET",
        "path": "/kubeclusters:summary?group_by=environment"}
    print(f"# python -m bench.embedded_fast_paths --n {args.n} --requests {args.requests} "
          f"--rounds {args.rounds}{' --journal' if args.journal else ''}  (load average "
          f"{os.getloadavg()[0]:.1f} at the start)", flush=True)
    print(f"{'fast path':<24}{'route':<28}{'on us':>9}{'off us':>10}{'buys':>8}  load", flush=True)
    for name, (off, names) in FAST_PATHS.items():
        if args.only and args.only not in name:
            continue
        for route_name in names:
            route = routes[route_name]
            cpu_per_request(call, route, max(1, args.requests // 10))  # warm
            on, offs = [], []
            for round_ in range(args.rounds):
                for state in (("on", "off") if round_ % 2 == 0 else ("off", "on")):
                    if state == "on":
                        on.append(cpu_per_request(call, route, args.requests))
                    else:
                        with off(store.db):
                            offs.append(cpu_per_request(call, route, args.requests))
            on_us, off_us = statistics.median(on), statistics.median(offs)
            print(f"{name:<24}{route_name:<28}{on_us:>9.0f}{off_us:>10.0f}"
                  f"{1 - on_us / off_us:>8.0%}  {os.getloadavg()[0]:.1f}", flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
