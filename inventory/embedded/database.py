"""The embedded in-memory database: mongomock, made as safe under threads as
MongoDB and as quick to read by key as an index, journaled to a data
directory when it has one. The front of `inventory.embedded`: what the
store opens (`embedded_database`) and its collections (`LockedCollection`,
made in `collection` of the parts beside it).

The design, and why: docs/design/embedded-store.md"""
import gc

import mongomock_ng

from inventory.core.errors import Unavailable
from inventory.embedded import lock
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

    def warm_in_turns(self):
        """Each collection's `warm` passes, one pass per turn of the lock with
        others running between (each pass 0.1-0.5 s at a million records): a
        start that does this after it answers answers about two seconds
        sooner at the envelope, and a request meanwhile waits one pass at
        most, where it would have waited for all of them."""
        for name in self._database.list_collection_names():
            for step in self[name].warming_steps():
                collecting = gc.isenabled()
                gc.disable()  # a pass makes up to a million objects, no cycles
                try:
                    with LOCK:
                        step()
                finally:
                    if collecting:
                        gc.enable()
                lock.yield_to_others()
        gc.freeze()  # what the passes made, out of the full collections' walk

    def command(self, *args, **kwargs):
        # a store that refuses writes is not ready (/readyz pings), whatever reads do
        refusal = self.journal.refusal if self.journal is not None else None
        if refusal is not None:
            raise Unavailable(refusal)
        with LOCK:
            return self._database.command(*args, **kwargs)


def embedded_database(name, data_dir=None, fsync="everysec", warm=True):
    """A database in memory; with `data_dir`, journaled there and replayed
    from it, and warmed unless `warm` is false (then `warm_in_turns` later,
    or each pass on its first use)."""
    database = mongomock_ng.MongoClient()[name]
    if not data_dir:
        return LockedDatabase(database)
    from inventory.embedded.journal import Journal

    locked = LockedDatabase(database, Journal.open(data_dir, database, fsync))
    locked.journal.guard(LOCK)
    if not warm:
        gc.freeze()
        return locked
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
