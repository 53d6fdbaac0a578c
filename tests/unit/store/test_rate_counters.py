"""The rate counters (inventory/store/rate_counters.py): the sliding-window
counter of the `limits` library, in this process's memory and in the
database (over the wire with MONGODB_URI: scripts/wire)."""
import math
import random
import threading
import time
import types
from datetime import datetime, timedelta, timezone

import pymongo.errors
import pytest
from limits import parse_many
from limits.storage import MemoryStorage
from limits.strategies import SlidingWindowCounterRateLimiter

from inventory.config import Config
from inventory.core.errors import Unavailable
from inventory.store import connect
from inventory.store import rate_counters as counters_module
from inventory.store.rate_counters import LocalRateCounter, SharedRateCounter
from inventory.store.records import stored_now
from inventory.store.retention import TTL_REFUSED
from tests.conftest import FERRETDB
from tests.support.races import ROUNDS, run_together

LIMITS = ["5 per minute", "3 per second;7 per minute", "2 per hour;3 per minute"]


def windows(text):
    """`limits`' items of `text`, shortest window first, and their (amount, seconds)."""
    items = sorted(parse_many(text), key=lambda item: item.get_expiry())
    return items, tuple((item.amount, item.get_expiry()) for item in items)


def library_hit(strategy, items, key):
    """What `limits`' sliding-window counter answers: each limit hit, the
    shortest first, none after one that refuses; the one named is the
    refusing one or else the one with the fewest left."""
    refused = next((at for at, item in enumerate(items) if not strategy.hit(item, key)), None)
    left = [strategy.get_window_stats(item, key) for item in items]
    at = refused if refused is not None else min(range(len(items)),
                                                   key=lambda at: left[at][1])
    reset_at, remaining = left[at]
    return refused is None, at, max(0, remaining), max(0, math.ceil(reset_at - time.time()))


@pytest.fixture
def clock(monkeypatch):
    """The counters' clock, set by the test: it starts at the next hour (a
    quarter second past), after the real one, so that the embedded store's
    TTL index expires nothing it counts."""
    now = [math.ceil(time.time() / 3600) * 3600 + 0.25]
    monkeypatch.setattr(counters_module, "time", types.SimpleNamespace(
        time=lambda: now[0], monotonic=time.monotonic))
    return now


@pytest.mark.parametrize("text", LIMITS)
def test_the_local_counter_answers_as_limits_sliding_window_counter(monkeypatch, text):
    """The same answers (allowed, the limit named, requests left, seconds to
    wait) for the same hits at the same moments, across windows."""
    clock = [1_700_000_000.25]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    items, limits = windows(text)
    local, library = LocalRateCounter(), SlidingWindowCounterRateLimiter(MemoryStorage())
    steps = random.Random(text)
    for _ in range(400):
        clock[0] += steps.choice((0.0, 0.01, 0.3, 1.7, 13.0, 59.0))
        key = steps.choice(("token:a", "token:b"))
        ours, theirs = local.hit(limits, key), library_hit(library, items, key)
        assert ours[:3] == theirs[:3], (clock[0], key, ours, theirs)
        assert abs(ours[3] - theirs[3]) <= 1, (clock[0], key, ours, theirs)


@pytest.mark.parametrize("text", LIMITS)
def test_the_database_counter_answers_as_the_local_one(store, clock, text):
    """Counted in the database's documents, hit for hit the same answers."""
    _, limits = windows(text)
    local, shared = LocalRateCounter(), SharedRateCounter(store.db, fallback=False)
    steps = random.Random(text)
    for _ in range(200):
        clock[0] += steps.choice((0.0, 0.01, 0.3, 1.7, 13.0, 59.0))
        key = steps.choice(("token:a", "address:192.0.2.1"))
        assert shared.hit(limits, key) == local.hit(limits, key), (clock[0], key)


def test_a_window_is_one_document_and_a_refused_request_is_not_counted(store, clock):
    counter = SharedRateCounter(store.db, fallback=False)
    day = windows("5 per day")[1]
    assert [counter.hit(day, "token:a")[:3] for _ in range(7)] == [
        (True, 0, 4), (True, 0, 3), (True, 0, 2), (True, 0, 1), (True, 0, 0),
        (False, 0, 0), (False, 0, 0)]
    [doc] = store.rate_windows.collection.find({})
    number = int(clock[0] // 86400)
    assert doc["_id"] == f"5/86400/{number}/token:a" and doc["n"] == 5
    # free once it is neither current nor previous
    expires = datetime.fromtimestamp((number + 2) * 86400, timezone.utc).replace(tzinfo=None)
    assert abs((doc["expires"] - expires).total_seconds()) < 0.002


def test_a_request_one_limit_refuses_counts_in_no_later_one(store, clock):
    counter = SharedRateCounter(store.db, fallback=False)
    _, limits = windows("2 per minute;100 per day")
    assert [counter.hit(limits, "token:a")[:2] for _ in range(4)] == [
        (True, 0), (True, 0), (False, 0), (False, 0)]
    counts = {doc["_id"].split("/")[1]: doc["n"]
              for doc in store.rate_windows.collection.find({})}
    assert counts == {"60": 2, "86400": 2}


def test_the_previous_windows_count_weighs_on_the_current_one(store, clock):
    """Half way through the next minute, half the last minute's 10 still count."""
    counter = SharedRateCounter(store.db, fallback=False)
    _, minute = windows("10 per minute")
    clock[0] = (clock[0] // 60 + 1) * 60 + 30  # half way into a minute
    assert all(counter.hit(minute, "token:a")[0] for _ in range(10))
    clock[0] += 60
    assert [counter.hit(minute, "token:a")[0] for _ in range(6)] == [True] * 5 + [False]
    another = SharedRateCounter(store.db, fallback=False)  # another process: read, not kept
    assert another.hit(minute, "token:a")[:3] == (False, 0, 0)


def test_old_windows_go_by_ttl_or_by_the_services_sweep(store, monkeypatch):
    """A TTL index on `expires` where the database holds one; where it refuses
    them (FerretDB), create-indexes notes it and the retention sweep deletes
    each window once it can be neither the current nor the previous one."""
    assert (store.rate_windows.collection, "expires", 0) in store.expiring()
    if FERRETDB:
        assert "rate_windows" in store.ttl_refused()
    else:
        ttl = [index for index in store.rate_windows.collection.index_information().values()
               if index["key"] == [("expires", 1)]]
        assert [index.get("expireAfterSeconds") for index in ttl] == [0]
        store.db.settings.update_one({"_id": TTL_REFUSED}, {"$set": {"value": ["rate_windows"]}},
                                     upsert=True)
    counter = SharedRateCounter(store.db, fallback=False)
    counter.hit(windows("5 per minute")[1], "token:a")
    assert store.sweep_expired(stored_now() + timedelta(seconds=59)) == 0  # still previous
    assert store.sweep_expired(stored_now() + timedelta(minutes=2)) == 1
    assert store.rate_windows.collection.count_documents({}) == 0


@pytest.mark.slow
def test_threads_in_several_processes_never_let_more_than_the_limit_through(store):
    """Each round (RACE_ROUNDS), a fresh caller hit at once by 8 threads
    through 4 counters (as 4 processes, each keeping what it read): 48 hits
    on a limit of 30, and exactly 30 let through, the window's document made
    by one of the racing upserts and counting 30; its organization's share,
    counted after, exactly what was let through."""
    processes = [SharedRateCounter(store.db, fallback=False) for _ in range(4)]
    _, token, organization = *windows("30 per day"), windows("1000 per day")[1]
    for round_ in range(ROUNDS):
        allowed, lock = [], threading.Lock()

        def hammer(counter):
            for _ in range(6):
                if counter.hit(token, f"token:r{round_}")[0]:
                    counter.hit(organization, f"organization:r{round_}")
                    with lock:
                        allowed.append(1)
        run_together([lambda counter=counter: hammer(counter)
                      for counter in processes * 2])
        counts = {doc["_id"]: doc["n"] for doc in store.rate_windows.collection.find(
            {"_id": {"$in": [f"30/86400/{int(time.time() // 86400)}/token:r{round_}",
                             f"1000/86400/{int(time.time() // 86400)}/organization:r{round_}"]}})}
        assert (len(allowed), sorted(counts.values())) == (30, [30, 30]), (round_, counts)


@pytest.fixture
def looks_back(monkeypatch):
    """`looks_back(counter)`: a list that gains an entry at each call the
    shared counter makes on its database's collection (its `collection`,
    watched). While the database is away a look back fails at its first
    call, so each entry is one look; a hit counted in memory makes none."""
    def watch(counter):
        looks, collection = [], counter.collection

        class Watched:
            def __getattr__(self, name):
                method = getattr(collection, name)

                def called(*args, **kwargs):
                    looks.append(1)
                    return method(*args, **kwargs)
                return called
        monkeypatch.setattr(counter, "collection", Watched())
        return looks
    return watch


def _unreachable(fallback=True):
    db = connect(Config(MONGODB_URI="mongodb://127.0.0.1:1", MONGODB_DB="x",
                        MONGODB_TIMEOUT_MS=100))
    return SharedRateCounter(db, fallback=fallback)


def test_while_the_database_is_away_rates_are_counted_in_memory_and_it_is_looked_at_again(
        store, monkeypatch, caplog, looks_back):
    # an hour's window: a minute's edge could fall inside the test and free the budget
    counter, two = _unreachable(), windows("2 per hour")[1]
    assert [counter.hit(two, "token:a")[0] for _ in range(3)] == [True, True, False]
    assert counter.hit(two, "token:b")[0] is True  # each caller its own budget still
    assert caplog.text.count("counting in this process's memory") == 1  # not looked at again yet
    monkeypatch.setattr(counters_module, "CHECK_BACK_SECONDS", 0)
    looks = looks_back(counter)
    assert counter.hit(two, "token:a")[0] is False  # still away: still in memory
    assert looks == [1]  # looked at again, and said once per outage, not at every look
    assert caplog.text.count("counting in this process's memory") == 1
    # back (here the test's database standing in for it): counted there again
    monkeypatch.setattr(counter, "collection", store.rate_windows.collection)
    assert counter.hit(two, "token:a")[0] is True
    assert store.rate_windows.collection.count_documents({}) == 1
    assert "The database counts rates again" in caplog.text


def test_while_the_process_knows_the_database_is_away_the_counter_does_not_look_back(
        monkeypatch, looks_back):
    """A look back costs the request MONGODB_TIMEOUT_MS before its own
    read fails too: while the outage is known (inventory.store.outages),
    none is made; once something reached the database, the next hit looks."""
    from inventory.store.outages import Outage

    counter, two = _unreachable(), windows("2 per hour")[1]
    counter.outage = Outage()
    assert counter.hit(two, "token:a")[0] is True  # failed: counted in memory
    counter.outage.failed(RuntimeError("away"))
    monkeypatch.setattr(counters_module, "CHECK_BACK_SECONDS", 0)
    looks = looks_back(counter)
    assert [counter.hit(two, "token:a")[0] for _ in range(2)] == [True, False]
    assert looks == []
    counter.outage.answered()
    counter.hit(two, "token:a")
    assert looks == [1]


def test_a_database_that_refuses_the_write_is_counted_around_too(store, monkeypatch):
    """A refusal that is no lost connection (a full disk: a write error)
    takes the same way: reads go on, counted in memory."""
    counter, two = SharedRateCounter(store.db), windows("2 per hour")[1]

    def refuses(*_args, **_kwargs):
        raise pymongo.errors.WriteError("No space left on device", 14031)
    monkeypatch.setattr(counter.collection, "find_one_and_update", refuses)
    assert [counter.hit(two, "token:a")[0] for _ in range(3)] == [True, True, False]
    without = SharedRateCounter(store.db, fallback=False)
    monkeypatch.setattr(without.collection, "find_one_and_update", refuses)
    with pytest.raises(Unavailable, match="rate counters"):
        without.hit(two, "token:a")


def test_without_a_fallback_an_away_database_is_unavailable():
    with pytest.raises(Unavailable):
        _unreachable(fallback=False).hit(windows("2 per hour")[1], "token:a")


def test_the_local_counter_forgets_windows_that_are_over(clock, monkeypatch, kept_windows):
    monkeypatch.setattr(counters_module, "SWEEP_EVERY", 10)
    counter, limits = LocalRateCounter(), windows("5 per minute")[1]
    for index in range(9):
        counter.hit(limits, f"address:10.0.0.{index}")
    clock[0] += 180  # every window over
    counter.hit(limits, "token:a")
    assert kept_windows(counter) == [("token:a", 5, 60)]
