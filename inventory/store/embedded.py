"""The embedded in-memory database, made as safe under threads as MongoDB.

mongomock does not promise that one operation is atomic when threads race
(a `find_one_and_update` reads, then writes). The service relies on exactly
what MongoDB guarantees: unique indexes and atomic single-document writes.
So every operation on the embedded database runs under one lock, which makes
each whole operation atomic: at least what MongoDB promises. `flask run`
serves with threads, and so do the concurrency tests.
"""
import threading

import mongomock_ng

_LOCK = threading.RLock()


class LockedCollection:
    """A mongomock collection whose every operation holds the lock; `find`
    answers a list, read inside the lock."""

    def __init__(self, collection):
        self._collection = collection

    def find(self, *args, **kwargs):
        with _LOCK:
            return list(self._collection.find(*args, **kwargs))

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


def embedded_database(name):
    return LockedDatabase(mongomock_ng.MongoClient()[name])
