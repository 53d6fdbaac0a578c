"""The data layer: the only code that imports pymongo or knows `_id`.

This module is its front: it wires the parts into the `Store` the app holds
(`init_app`, `get_store`). Where each part lives: docs/development/layout.md
(`inventory/store/`); connecting to the database: inventory.store.connection.
"""
import logging
import secrets
import threading

import pymongo
from flask import current_app

from inventory.core.caps import DEFAULT_QUOTAS
from inventory.store.connection import connect
from inventory.store.envelope import Envelope
from inventory.store.events import EventStore
from inventory.store.idempotency import IdempotencyStore
from inventory.store.indexes import Indexes
from inventory.store.interrupted_deletes import InterruptedDeletes
from inventory.store.quotas import Quotas
from inventory.store.rate_counters import LocalRateCounter, SharedRateCounter
from inventory.store.retention import Retention
from inventory.store.sessions import SessionStore

log = logging.getLogger(__name__)

__all__ = ["Store", "connect", "get_store", "init_app"]


class Store(Indexes, Retention, InterruptedDeletes, Envelope):
    """The resource collections, the change feed, the idempotency keys, the
    console's sessions and the rate counters over one database. `resources`
    are (spec, store class) pairs, parents first
    (inventory.resources.store_classes()): each store is an attribute named
    as its resource, wired to its parent and children as declared. Its
    mixins, one module each, work on what it wires: `indexes`, `retention`
    (TTL and the sweep), `interrupted_deletes`, `envelope`."""

    def __init__(self, db, resources, quota_defaults=None, scan_retention=(365, 1000),
                 events_retention_days=30, webhook_lease=60, unscoped_webhooks=None):
        self.db = db
        self.resources = []
        self._refused_said = []  # the refused TTL indexes this process said it sweeps for
        settings = {"scan_retention": scan_retention, "webhook_lease": webhook_lease,
                    "unscoped_webhooks": unscoped_webhooks}
        for spec, store_class in resources:
            resource = store_class(db)
            resource.configure(settings)
            setattr(self, spec.name, resource)
            self.resources.append(resource)
            if spec.parent is not None:  # parents and children: references, cascades
                parent = getattr(self, spec.parent)
                setattr(resource, spec.parent, parent)
                resource.parent_store = parent
                parent.children = (*parent.children, resource)
        for resource in self.resources:  # the stores it reads, besides its parent's
            for name in resource.spec.reads:
                setattr(resource, name, getattr(self, name))
        self.idempotency = IdempotencyStore(db)
        self.sessions = SessionStore(db)  # the console's sign-ins (inventory/ui)
        # what this process counts callers' rates with (inventory.http.rate_limits):
        # the database's windows where several processes share it (init_app)
        self.rate_windows = SharedRateCounter(db)
        self.rate_counter = LocalRateCounter()
        # every change's event goes through the record's outbox to the feed
        self.events = EventStore(db, events_retention_days)
        self.events.sources = [resource for resource in self.listed() if resource.event_kind]
        for resource in self.listed():
            resource.feed = self.events  # to read it (webhooks)
            # to write into it: the resources whose changes are events
            resource.events = self.events if resource.event_kind else None
        quotas = Quotas(self.organizations.collection, quota_defaults or DEFAULT_QUOTAS)
        self.organizations.quotas = quotas
        for counted in self.listed():
            if counted.quota_kind is not None:
                counted.quotas = quotas
                quotas.children[counted.quota_kind] = counted.collection

    def listed(self):
        return tuple(self.resources)

    def ping(self):
        self.db.command("ping")

    def signing_key(self):
        """A random key kept in the database, made once, shared by all workers.
        Read first: once it exists, using it writes nothing (a read must not
        need a write, which a full disk would refuse)."""
        doc = self.db.settings.find_one({"_id": "signing-key"})
        if doc is not None:
            return doc["value"]
        doc = self.db.settings.find_one_and_update(
            {"_id": "signing-key"}, {"$setOnInsert": {"value": secrets.token_hex(32)}},
            upsert=True, return_document=pymongo.ReturnDocument.AFTER)
        return doc["value"]


def get_store():
    return current_app.extensions["inventory.store"]


def init_app(app, config, resources):
    """The store of `config`'s database for `resources` ((spec, store class) pairs)."""
    store = Store(connect(config), resources, config.quota_defaults,
                  (config.SCAN_RETENTION_DAYS, config.SCAN_RETENTION_COUNT),
                  config.EVENTS_RETENTION_DAYS, config.WEBHOOK_LEASE,
                  config.QUOTA_UNSCOPED_WEBHOOKS)
    store.events.shared = not config.embedded  # other workers and instances write it too
    if not config.embedded:  # every worker and instance counts a caller's rate together
        store.rate_counter = store.rate_windows
        store.rate_windows.outage = store.db.outage
    app.extensions["inventory.store"] = store
    if config.embedded:
        store.create_indexes(unless_known=True)  # no release step runs for it
        if config.journaled:
            store.signing_key()  # made at start, not by the first page a reader asks for
        store.warn_if_past_envelope()
        if config.ANNOUNCE and config.journaled:
            log.warning("No MONGODB_URI: the embedded store is in use, journaled to %s "
                        "(fsync %s). Only this process may use that directory.",
                        store.db.journal.directory, config.INVENTORY_FSYNC)
        elif config.ANNOUNCE:
            log.warning("No MONGODB_URI: the embedded in-memory store is in use. All data "
                        "lives in this process and is lost when it stops.")
    if config.ANNOUNCE:  # serving: publish the events of writers that died, finish their deletes
        # (once the start's own passes are done: under gevent these threads
        # are greenlets, and their first passes, over every record at the
        # envelope, would run inside the start's turns and lengthen it)
        if config.embedded:
            threading.Thread(target=_warm_then_settle, args=(store,), name="store-warmer",
                             daemon=True).start()
        store.events.start_sweeping()
        store.start_finishing_deletes()
        if not config.embedded:
            store.start_sweeping_expired()
    return store


def _warm_then_settle(store):
    """After the start's first answer, in turns: the embedded store's warm
    passes, then the derived fields its writes left behind."""
    store.db.warm_in_turns()
    store.settle_in_turns()
