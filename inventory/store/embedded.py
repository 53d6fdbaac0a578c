"""The embedded in-memory database, made as safe under threads as MongoDB.

mongomock does not promise that one operation is atomic when threads race
(a `find_one_and_update` reads, then writes). The service relies on exactly
what MongoDB guarantees: unique indexes and atomic single-document writes.
So every operation on the embedded database runs under one lock, which makes
each whole operation atomic: at least what MongoDB promises. `flask run`
serves with threads, and so do the concurrency tests.
"""
import copy
import threading

import mongomock_ng
from mongomock_ng.filtering import filter_applies

_LOCK = threading.RLock()


class LockedCollection:
    """A mongomock collection whose every operation holds the lock; `find`
    answers a list, read inside the lock."""

    def __init__(self, collection):
        self._collection = collection

    def find(self, *args, **kwargs):
        with _LOCK:
            return list(self._collection.find(*args, **kwargs))

    def find_one(self, filter=None, projection=None):
        """mongomock's find_one evaluates the filter against every document;
        a read by `_id` (every read of one record by its key) goes straight to
        the document and evaluates the filter on it alone, with the same result."""
        key = filter.get("_id") if isinstance(filter, dict) else None
        if not isinstance(key, str) or not _plain_inclusion(projection):
            with _LOCK:
                return self._collection.find_one(filter, projection)
        with _LOCK:
            documents = self._collection._store  # keyed by _id
            if key not in documents or not filter_applies(filter, documents[key]):
                return None
            found = copy.deepcopy(documents[key])
        if projection:
            found = {k: v for k, v in found.items() if k == "_id" or projection.get(k)}
        return found

    def __getattr__(self, name):
        attribute = getattr(self._collection, name)
        if not callable(attribute):
            return attribute

        def locked(*args, **kwargs):
            with _LOCK:
                return attribute(*args, **kwargs)
        return locked


class LockedDatabase:
    def __init__(self, database):
        self._database = database
        self._collections = {}

    def __getitem__(self, name):
        if name.startswith("_"):  # not a collection: copy/pickle probing
            raise AttributeError(name)
        if name not in self._collections:
            self._collections[name] = LockedCollection(self._database[name])
        return self._collections[name]

    __getattr__ = __getitem__

    @property
    def name(self):
        return self._database.name

    @property
    def client(self):
        return self._database.client

    def command(self, *args, **kwargs):
        with _LOCK:
            return self._database.command(*args, **kwargs)


def _plain_inclusion(projection):
    """No projection, or one that includes top-level fields and nothing else."""
    return projection is None or all(
        value in (1, True) and "." not in key and not key.startswith("$")
        for key, value in projection.items())


def embedded_database(name):
    return LockedDatabase(mongomock_ng.MongoClient()[name])
