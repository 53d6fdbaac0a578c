"""The embedded in-memory database: mongomock, made as safe under threads as
MongoDB and as quick to read by key as an index, journaled to a data
directory when it has one. The front of `inventory.embedded`: what the
store opens (`embedded_database`) and its collections (`LockedCollection`,
made in `collection` of the parts beside it).

The design, and why: docs/design/embedded-store.md"""
import gc

import mongomock_ng

from inventory.core.errors import Unavailable
from inventory.embedded.collection import LockedCollection
from inventory.embedded.key_index import holders
from inventory.embedded.lock import LOCK

__all__ = ["LockedDatabase", "LockedCollection", "embedded_database", "LOCK"]
# the names the journal's tests import from here (tests/unit/embedded/test_journal*.py)
_LOCK, _holders = LOCK, holders


class LockedDatabase:
    def __init__(self, database, journal=None):
        self._database = database
        self._collections = {}
        self.journal = journal  # inventory.embedded.journal.Journal, or None: memory only

    def __getitem__(self, name):
        if name.startswith("_"):  # not a collection: copy/pickle probing
            raise AttributeError(name)
        if name not in self._collections:
            if self.journal is not None:
                self.journal.track(name, self._database[name])
            self._collections[name] = LockedCollection(self._database[name], self.journal)
        return self._collections[name]

    __getattr__ = __getitem__

    @property
    def name(self):
        return self._database.name

    @property
    def client(self):
        return self._database.client

    def command(self, *args, **kwargs):
        # a store that refuses writes is not ready (/readyz pings), whatever reads do
        refusal = self.journal.refusal if self.journal is not None else None
        if refusal is not None:
            raise Unavailable(refusal)
        with LOCK:
            return self._database.command(*args, **kwargs)


def embedded_database(name, data_dir=None, fsync="everysec"):
    """A database in memory; with `data_dir`, journaled there and replayed from it."""
    database = mongomock_ng.MongoClient()[name]
    if not data_dir:
        return LockedDatabase(database)
    from inventory.embedded.journal import Journal

    locked = LockedDatabase(database, Journal.open(data_dir, database, fsync))
    locked.journal.guard(LOCK)
    collecting = gc.isenabled()
    gc.disable()  # as the replay: millions of objects, no cycles
    try:
        for name in database.list_collection_names():
            locked[name].warm()
    finally:
        if collecting:
            gc.enable()
    gc.freeze()
    return locked
