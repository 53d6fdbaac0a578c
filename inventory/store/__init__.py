"""The data layer: the only code that imports pymongo or knows `_id`.

`MONGODB_URI` set: a real MongoDB. Unset: an in-memory mongomock database,
journaled to INVENTORY_DATA_DIR when that is set (inventory/embedded/journal.py),
else living and dying with this process.
"""
import logging
import secrets
import threading
import time
from datetime import timedelta

import pymongo
import pymongo.collection
import pymongo.database
import pymongo.errors
from flask import current_app
from pymongo import ASCENDING

from inventory.core.caps import DEFAULT_QUOTAS
from inventory.core.errors import HasChildren, Unavailable
from inventory.store.base import DELETING
from inventory.store.events import OUTBOX_SINCE, EventStore, stored_now
from inventory.store.idempotency import KEEP_FOR, IdempotencyStore
from inventory.store.outages import Outage, background
from inventory.store.quotas import Quotas
from inventory.store.rate_counters import LocalRateCounter, SharedRateCounter
from inventory.store.sessions import IDLE, SessionStore

log = logging.getLogger(__name__)
_NOT_IMPLEMENTED = 238  # a server's refusal of what it does not implement (FerretDB)

DELETES_SWEEP_SECONDS = 30.0  # between two looks for deletes no process is finishing
# Where the database refuses TTL indexes (FerretDB), the service's own sweep of
# what they would expire: every RETENTION_SWEEP_SECONDS (MongoDB's TTL monitor
# runs every 60 s), RETENTION_SLICE records a delete.
RETENTION_SWEEP_SECONDS = 60.0
RETENTION_SLICE = 500
# The settings document create-indexes writes when the database refused a TTL
# index: the serving processes then sweep (Store.start_sweeping_expired).
TTL_REFUSED = "ttl-refused"


class _Guarded:
    """A pymongo database or collection whose calls raise the service's
    Unavailable, not pymongo's ConnectionFailure (server selection and
    network timeouts among them), when the database is away, noting the
    outage (`Outage`). `find` and `aggregate` answer a list, so that the
    cursor's reads happen inside the guard."""

    def __init__(self, target, outage=None):
        self._target = target
        self.outage = outage or Outage()

    @property
    def unguarded(self):
        """The pymongo object itself (the query-plan tests call explain())."""
        return self._target

    def __getitem__(self, name):
        return _Guarded(self._target[name], self.outage)

    def __getattr__(self, name):
        attribute = getattr(self._target, name)
        if isinstance(attribute, pymongo.collection.Collection) and \
                isinstance(self._target, pymongo.collection.Collection):
            # pymongo answers any name it lacks with a sub-collection
            # (`<name>.uncopied`): on a collection, that is never what was meant
            raise AttributeError(f"A collection has no attribute {name!r} (pymongo would "
                                 f"answer the sub-collection {attribute.name!r}).")
        if isinstance(attribute, (pymongo.collection.Collection, pymongo.database.Database)):
            return _Guarded(attribute, self.outage)
        if not callable(attribute) or name == "client":
            return attribute

        def guarded(*args, **kwargs):
            try:
                answer = attribute(*args, **kwargs)
                answer = list(answer) if name in ("find", "aggregate") else answer
            except pymongo.errors.ConnectionFailure as error:
                self.outage.failed(error)
                raise Unavailable() from error
            except pymongo.errors.OperationFailure:  # the server's own refusal: it answers
                self.outage.answered()
                raise
            self.outage.answered()
            return answer
        return guarded


def connect(config):
    """The database named by the config; the client is safe to fork with."""
    if config.MONGODB_URI:
        # connect=False: no sockets before gunicorn forks its workers.
        # Short timeouts: an unreachable database answers 503 in seconds, not 30.
        timeout = config.MONGODB_TIMEOUT_MS
        client = pymongo.MongoClient(
            config.MONGODB_URI, connect=False, appname="cluster-inventory",
            serverSelectionTimeoutMS=timeout, connectTimeoutMS=timeout,
            socketTimeoutMS=2 * timeout)
        # MONGODB_DB wins over the URI's own database: the tests rely on it
        # to work in a throwaway database whatever the URI names.
        if config.MONGODB_DB:
            return _Guarded(client[config.MONGODB_DB])
        return _Guarded(client.get_default_database(default="inventory"))
    from inventory.embedded.database import embedded_database

    # serving, the replayed store is warmed after the start (init_app), in turns
    return embedded_database(config.MONGODB_DB or "inventory",
                             config.INVENTORY_DATA_DIR if config.journaled else None,
                             config.INVENTORY_FSYNC, warm=not config.ANNOUNCE)


class Store:
    """The resource collections, the change feed, the idempotency keys, the
    console's sessions and the rate counters over one database. `resources`
    are (spec, store class) pairs, parents first
    (inventory.resources.store_classes()): each store is an attribute named
    as its resource, wired to its parent and children as declared."""

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

    def create_indexes(self, unless_known=False):
        """Every index the queries need, and the order keys they index. With
        `unless_known` (the embedded store's start), the pass that adds
        missing order keys is skipped when the declared ones are those the
        last pass recorded: every record since was written with them, and on
        mongomock the pass reads every record."""
        for resource in self.listed():
            for keys, options in resource.spec.indexes:
                resource.collection.create_index(list(keys), **options)
        for keys, options in self.events.indexes():
            self.events.collection.create_index(keys, **options)
        self.sessions.collection.create_index([("token", ASCENDING)])  # a revoke ends them
        refused = [collection.name for collection, field, seconds in self.expiring()
                   if not self._create_ttl_index(collection, field, seconds)]
        if refused:
            self.db.settings.update_one({"_id": TTL_REFUSED}, {"$set": {"value": refused}},
                                        upsert=True)
        elif self.db.settings.find_one({"_id": TTL_REFUSED}) is not None:  # now held
            self.db.settings.delete_one({"_id": TTL_REFUSED})
        for resource in self.listed():
            for keys in resource.order_indexes():
                resource.collection.create_index(keys)
            # the sweepers' queries: records with events not yet in the feed,
            # records a delete marked
            resource.collection.create_index([(OUTBOX_SINCE, ASCENDING)], sparse=True)
            resource.collection.create_index([(DELETING, ASCENDING)], sparse=True)
        self.organizations.quotas.count_uncounted()  # written before quotas existed
        declared = {resource.collection.name: [field for _, field in resource.kept_orderings()]
                    for resource in self.listed()}
        # (the fields each resource gives records written before they existed
        # are named too: a new one makes the pass run once more)
        backfilled = {resource.collection.name: list(resource.backfilled)
                      for resource in self.listed() if resource.backfilled}
        marker = {"_id": "order-keys", "value": declared, "derived": backfilled}
        if unless_known and self.db.settings.find_one({"_id": "order-keys"}) == marker:
            return
        for resource in self.listed():
            resource.add_missing_order_keys()
            resource.add_missing_fields()
        if unless_known:
            self.db.settings.update_one({"_id": "order-keys"}, {"$set": {
                "value": declared, "derived": backfilled}}, upsert=True)

    def expiring(self):
        """(collection, field, seconds): the records kept for a time after
        the date in `field`, each expired by a TTL index (or the sweep)."""
        return [(self.idempotency.collection, "created_at", int(KEEP_FOR.total_seconds())),
                (self.sessions.collection, "last_seen", int(IDLE.total_seconds())),
                (self.events.collection, "at", int(self.events.retention.total_seconds())),
                (self.rate_windows.collection, "expires", 0),  # each window's own end
                *[(resource.collection, field, seconds) for resource in self.listed()
                  for field, seconds in resource.expiring()]]

    def _create_ttl_index(self, collection, field, seconds):
        """A TTL index, or its new age when it exists with another
        (SCAN_RETENTION_DAYS changed): MongoDB changes it in place (collMod).
        False when the database refuses TTL indexes (FerretDB 1.x: code 238,
        NotImplemented): a plain index on `field` then serves the sweep."""
        try:
            collection.create_index([(field, ASCENDING)], expireAfterSeconds=seconds)
        except pymongo.errors.OperationFailure as error:
            if error.code == _NOT_IMPLEMENTED:
                collection.create_index([(field, ASCENDING)])
                return False
            self.db.command("collMod", collection.name, index={
                "keyPattern": {field: 1}, "expireAfterSeconds": seconds})
        return True

    def ttl_refused(self):
        """The collections whose TTL index the database refused at the last
        create-indexes (their records are swept by the service instead)."""
        doc = self.db.settings.find_one({"_id": TTL_REFUSED})
        return (doc or {}).get("value") or []

    def sweep_expired(self, now=None):
        """Delete what the refused TTL indexes would have expired, a slice of
        RETENTION_SLICE records at a time, oldest first (a read and a delete
        by key: no write ever large, whatever is due); how many went.
        Which were refused is read each time (a create-indexes run since is
        followed), and said when this process first finds them.
        Several processes may sweep at once: a delete of what is gone is a no-op."""
        refused, now, deleted = self.ttl_refused(), now or stored_now(), 0
        if refused and refused != self._refused_said:
            log.warning("The database refused TTL indexes at create-indexes (%s): this process "
                        "deletes their expired records itself every %d s.", ", ".join(refused),
                        RETENTION_SWEEP_SECONDS)
        self._refused_said = refused
        for collection, field, seconds in self.expiring():
            if collection.name not in refused:
                continue
            cutoff = now - timedelta(seconds=seconds)
            while True:
                keys = [doc["_id"] for doc in collection.find(
                    {field: {"$lt": cutoff}}, {"_id": 1}, sort=[(field, ASCENDING)],
                    limit=RETENTION_SLICE)]
                if keys:
                    deleted += collection.delete_many(
                        {"_id": {"$in": keys}, field: {"$lt": cutoff}}).deleted_count
                if len(keys) < RETENTION_SLICE:
                    break
        return deleted

    def start_sweeping_expired(self):
        """In this process, for its life, on MongoDB: sweep what the TTL
        indexes the database refused would expire, now and every
        RETENTION_SWEEP_SECONDS (nothing where none were). Not a read at
        start: a start while the database is away must not fail."""
        def run():
            while True:
                with background("Sweeping expired records"):
                    self.sweep_expired()
                time.sleep(RETENTION_SWEEP_SECONDS)
        threading.Thread(target=run, name="retention-sweeper", daemon=True).start()

    def listed(self):
        return tuple(self.resources)

    def finish_interrupted_deletes(self, only=None):
        """Finish the deletes that no process is finishing (records left
        marked: their process died, or its store failed midway), parents
        first, each as it was asked (a forced delete's cascade completes; an
        unforced delete of a record that has children is undone, as it
        would have been). `only`: just these (resource, key) pairs, those
        marked at an earlier look. Answers the pairs marked now."""
        found = set()
        for resource in self.listed():
            marked = resource.marked(self.events.shared)
            found.update((resource.spec.name, doc["_id"]) for doc in marked)
            due = [doc for doc in marked
                   if only is None or (resource.spec.name, doc["_id"]) in only]
            if due:  # one line a kind: a cascade's records are many
                log.warning("Finishing %d interrupted delete(s) of %ss (%s%s).", len(due),
                            resource.kind, ", ".join(repr(doc["_id"]) for doc in due[:3]),
                            ", ..." if len(due) > 3 else "")
            for doc in due:
                try:
                    resource.finish_delete(doc)
                except HasChildren:
                    pass  # an unforced delete's, restored
        return found

    def start_finishing_deletes(self):
        """In this process, for its life: finish interrupted deletes. The
        embedded store's at once (what is marked at start, an earlier process
        left); then every DELETES_SWEEP_SECONDS those still marked since the
        last look (a delete under way is left to its request)."""
        def run():
            seen = None if not self.events.shared else set()
            while True:
                with background("Finishing interrupted deletes"):
                    seen = self.finish_interrupted_deletes(seen)
                time.sleep(DELETES_SWEEP_SECONDS)
        threading.Thread(target=run, name="delete-finisher", daemon=True).start()

    def enveloped(self):
        """The resources whose counts the embedded store's envelope bounds."""
        return [resource for resource in self.listed() if resource.envelope is not None]

    def envelope(self):
        """On the embedded store, {<resource>: count, ..., "within"}
        ({"clusters", "scans", "within"}): its size against the envelope its
        resources declare; None on MongoDB (no such bound)."""
        if self.events.shared:
            return None
        counts = {resource.spec.name: resource.collection.estimated_document_count()
                  for resource in self.enveloped()}
        return {**counts, "within": all(counts[resource.spec.name] <= resource.envelope
                                        for resource in self.enveloped())}

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
        envelope = store.envelope()
        if not envelope["within"]:
            log.warning("The embedded store holds %s, past the envelope it is measured for "
                        "(%s on one worker): requests and background work may hold the event "
                        "loop longer than promised; use MongoDB (MONGODB_URI) at this size.",
                        ", ".join(f"{envelope[r.spec.name]} {r.spec.name}"
                                  for r in store.enveloped()),
                        ", ".join(f"{r.envelope} {r.spec.name}" for r in store.enveloped()))
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
            threading.Thread(target=store.db.warm_in_turns, name="store-warmer",
                             daemon=True).start()
        store.events.start_sweeping()
        store.start_finishing_deletes()
        if not config.embedded:
            store.start_sweeping_expired()
    return store
