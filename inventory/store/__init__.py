"""The data layer: the only code that imports pymongo or knows `_id`.

`MONGODB_URI` set: a real MongoDB. Unset: an in-memory mongomock database
that lives and dies with this process.
"""
import logging
import secrets

import click
import pymongo
import pymongo.collection
import pymongo.database
import pymongo.errors
from flask import current_app
from flask.cli import with_appcontext
from pymongo import ASCENDING

from inventory.errors import Unavailable
from inventory.store.idempotency import IdempotencyStore
from inventory.store.quotas import Quotas
from inventory.store.resources import (
    ClusterStore,
    OrganizationStore,
    PlatformStore,
    ScanStore,
)
from inventory.store.tokens import TokenStore

log = logging.getLogger(__name__)

INDEXES = {
    # collection: [(keys, options)]
    "platforms": [([("organization", ASCENDING), ("_id", ASCENDING)], {})],
    "clusters": [([("id", ASCENDING)], {"unique": True}),
                 ([("platform", ASCENDING), ("_id", ASCENDING)], {}),
                 ([("organization", ASCENDING), ("_id", ASCENDING)], {})],
    # Scan ids are UUIDv7s the server makes; the index serves lookups. (A
    # unique one would guard nothing, and costs the embedded store a pass
    # over every scan on each insert.)
    "scans": [([("id", ASCENDING)], {})],
    "tokens": [([("hash", ASCENDING)], {"unique": True}),
               ([("organization", ASCENDING), ("_id", ASCENDING)], {})],
    "idempotency": [([("created_at", ASCENDING)], {"expireAfterSeconds": 24 * 3600})],
}


class _Guarded:
    """A pymongo database or collection whose calls raise the service's
    Unavailable, not pymongo's ConnectionFailure (server selection and
    network timeouts among them), when the database is away. `find` answers
    a list, so that the cursor's own reads happen inside the guard."""

    def __init__(self, target):
        self._target = target

    @property
    def unguarded(self):
        """The pymongo object itself (the query-plan tests call explain())."""
        return self._target

    def __getitem__(self, name):
        return _Guarded(self._target[name])

    def __getattr__(self, name):
        attribute = getattr(self._target, name)
        if isinstance(attribute, (pymongo.collection.Collection, pymongo.database.Database)):
            return _Guarded(attribute)
        if not callable(attribute) or name == "client":
            return attribute

        def guarded(*args, **kwargs):
            try:
                answer = attribute(*args, **kwargs)
                return list(answer) if name == "find" else answer
            except pymongo.errors.ConnectionFailure as error:
                raise Unavailable() from error
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
    from inventory.store.embedded import embedded_database  # local runs and tests only

    return embedded_database(config.MONGODB_DB or "inventory")


class Store:
    """The resource collections, and the API tokens, over one database."""

    def __init__(self, db, quota_defaults, scan_retention=(365, 1000)):
        self.db = db
        self.tokens = TokenStore(db)
        self.organizations = OrganizationStore(db)
        self.platforms = PlatformStore(db)
        self.clusters = ClusterStore(db)
        self.scans = ScanStore(db, *scan_retention)
        self.idempotency = IdempotencyStore(db)
        # parents and children, for references and cascading deletes
        self.organizations.children = self.platforms
        self.organizations.tokens = self.tokens
        self.tokens.organizations = self.organizations
        self.platforms.organizations = self.organizations
        self.platforms.children = self.clusters
        self.clusters.platforms = self.platforms
        self.clusters.children = self.scans
        self.scans.clusters = self.clusters
        quotas = Quotas(self.organizations.collection, quota_defaults)
        for counted in (self.platforms, self.clusters, self.tokens):
            counted.quotas = quotas
            quotas.children[counted.quota_kind] = counted.collection
        self.organizations.quotas = quotas

    def create_indexes(self):
        """Every index the queries need, and the order keys they index."""
        for name, indexes in INDEXES.items():
            for keys, options in indexes:
                self.db[name].create_index(keys, **options)
        self._create_ttl_index(self.scans.collection, self.scans.TIME_FIELD,
                               self.scans.retention_days * 24 * 3600)
        for resource in self.listed():
            for keys in resource.order_indexes():
                resource.collection.create_index(keys)
            resource.add_missing_order_keys()

    def _create_ttl_index(self, collection, field, seconds):
        """A TTL index, or its new age when it exists with another
        (SCAN_RETENTION_DAYS changed): MongoDB changes it in place (collMod)."""
        try:
            collection.create_index([(field, ASCENDING)], expireAfterSeconds=seconds)
        except pymongo.errors.OperationFailure:
            self.db.command("collMod", collection.name, index={
                "keyPattern": {field: 1}, "expireAfterSeconds": seconds})

    def listed(self):
        return (self.organizations, self.platforms, self.clusters, self.scans, self.tokens)

    def ping(self):
        self.db.command("ping")

    def signing_key(self):
        """A random key kept in the database, made once, shared by all workers."""
        doc = self.db.settings.find_one_and_update(
            {"_id": "signing-key"}, {"$setOnInsert": {"value": secrets.token_hex(32)}},
            upsert=True, return_document=pymongo.ReturnDocument.AFTER)
        return doc["value"]


def get_store():
    return current_app.extensions["inventory.store"]


@click.command("create-indexes")
@with_appcontext
def create_indexes_command():
    """Create the database's indexes (the Procfile's release step)."""
    get_store().create_indexes()
    click.echo("Indexes created.")


def init_app(app, config):
    store = Store(connect(config), config.quota_defaults,
                  (config.SCAN_RETENTION_DAYS, config.SCAN_RETENTION_COUNT))
    app.extensions["inventory.store"] = store
    if config.embedded:
        store.create_indexes()  # no release step runs for an in-memory database
        if config.ANNOUNCE:
            log.warning("No MONGODB_URI: the embedded in-memory store is in use. All data "
                        "lives in this process and is lost when it stops.")
    app.cli.add_command(create_indexes_command)
    return store
