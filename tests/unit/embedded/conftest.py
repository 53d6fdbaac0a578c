"""Fixtures of the embedded store's collections, and of its lock's turns
and slices (inventory/embedded/lock.py)."""
import random
import threading

import mongomock_ng
import pytest

from inventory.embedded import lock
from inventory.embedded.collection import LockedCollection
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
    private per-thread record (`StoreLock._held`): the lock offers no way
    to forget a turn, as nothing but a test should."""
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
