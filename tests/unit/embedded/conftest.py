"""Fixtures of the embedded store's collections, and of its lock's turns
and slices (inventory/embedded/lock.py); those that reach a private part
say why (tests/unit/test_private_reach.py holds them to it)."""
import copy
import random
import threading

import mongomock_ng
import pytest

from inventory.embedded import lock, mongomock_internals
from inventory.embedded.collection import LockedCollection
from inventory.embedded.key_index import holders
from tests.support.mongomock_pairs import DOCS, N


@pytest.fixture
def collections():
    """mongomock's collection of DOCS, and the embedded store's over it."""
    plain = mongomock_ng.MongoClient().db.things
    plain.insert_many([dict(d) for d in DOCS])
    return plain, LockedCollection(plain)


@pytest.fixture
def raw_things():
    """The mongomock collection behind `things` (what it hands mongomock)."""
    return mongomock_ng.MongoClient().db.things


@pytest.fixture
def things(raw_things):
    """N documents inserted in a random order: `_id` k000.., `name` n000..,
    `group` 0-2."""
    collection = LockedCollection(raw_things)
    for i in random.Random(7).sample(range(N), N):
        collection.insert_one({"_id": f"k{i:03d}", "name": f"n{i:03d}", "group": i % 3})
    return collection


@pytest.fixture
def a_turn_of_its_own():
    """A fresh turn: how long earlier tests held the lock (this thread's
    turn, kept by the lock) is not this test's own. It clears the lock's
    per-thread record (`StoreLock._held`).
    Private: the lock offers no way to forget a turn, as nothing but a test should."""
    lock.LOCK._held.__dict__.clear()


@pytest.fixture
def every_entry_a_slice(monkeypatch):
    """Every entry examined ends a slice: the walk lets others in after each."""
    monkeypatch.setattr(lock, "SLICE_SECONDS", -1.0)
    monkeypatch.setattr(lock, "CLOCK_EVERY", 1)


@pytest.fixture
def long_walks_of_its_own(monkeypatch):
    """The long walks' turn, this test's own: a walk of another test's app
    still running in the process (its background tasks, under a loaded
    machine) would otherwise hold the shared one when the test looks."""
    monkeypatch.setattr(lock, "LONG_WALKS", threading.Semaphore(1))


@pytest.fixture
def between_slices(monkeypatch):
    """`between_slices(action)`: run `action(call number)` where a walk or
    a sequence lets others in (the lock released); the calls, a list."""
    def install(action):
        calls = []

        def let_others_run():
            calls.append(len(calls))
            action(len(calls))
        monkeypatch.setattr(lock, "yield_to_others", let_others_run)
        return calls
    return install


@pytest.fixture
def contents():
    """Every collection of a database: its documents in stored order, and its
    indexes. It reaches the LockedDatabase's mongomock database and each
    collection's store. Private: a replay must give back the documents as
    stored, their order and the index definitions, which no public API
    shows whole."""
    def of(database):
        raw = database._database
        stores = {name: mongomock_internals.collection_store(raw[name])
                  for name in sorted(raw.list_collection_names())}
        return copy.deepcopy({name: (list(mongomock_internals.documents(store).items()),
                                     store.indexes)
                              for name, store in stores.items()})
    return of


@pytest.fixture
def store_lock():
    """The embedded store's lock, as `embedded_database` hands it to the
    journal's guard: a test runs the guard's round itself rather than wait
    for the timer."""
    from inventory.embedded.lock import LOCK
    return LOCK


@pytest.fixture
def caches():
    """`read(collection)`: what a warm made of the collection's caches (its
    key order, lookups and expiry heap).
    Private: a warm's only effect on reads is their speed, so a test of the
    warm reads the caches themselves."""
    def read(collection):
        lookups = {field: {value: sorted(holders(lookup, value))
                           for value in lookup}
                   for field, lookup in collection._by_field.items() if lookup is not None}
        expiring = sorted(collection._expiring) if collection._expiring is not None else None
        return {"keys": collection._keys, "lookups": lookups, "expiring": expiring}
    return read


@pytest.fixture
def counted_passes(monkeypatch):
    """`counted_passes(locked)`: a list that gains an entry at each pass the
    collection makes over its documents (a count's, a look's for marked
    records).
    Private: every pass goes through `Reads._document_slices`, wrapped here;
    a pass leaves no public trace, and a count must read each document once."""
    def count(locked):
        passes, original = [], locked._document_slices

        def counted():
            passes.append(1)
            return original()
        monkeypatch.setattr(locked, "_document_slices", counted)
        return passes
    return count


@pytest.fixture
def scans_refused(monkeypatch):
    """`scans_refused(raw)`: mongomock's passes over every document of its
    collection `raw` fail from now on.
    Private: they are mongomock's private methods (`_iter_documents`,
    `_ensure_uniques`); no public trace tells that the keyed paths never
    reach them."""
    def scanned(*_args, **_kwargs):
        raise AssertionError("a keyed write scanned the collection")

    def refuse(raw):
        monkeypatch.setattr(raw, "_iter_documents", scanned)
        monkeypatch.setattr(raw, "_ensure_uniques", scanned)
    return refuse


@pytest.fixture
def raw_collection():
    """`raw_collection(locked)`: the mongomock collection object behind a
    store's LockedCollection, to record what the store hands to mongomock's
    own passes.
    Private: it is the LockedCollection's `_collection`; what the store
    hands mongomock leaves no public trace."""
    return lambda locked: locked._collection
