"""A long walk of the embedded store lets others in between its slices
(inventory/embedded/database.py, "Long walks") and still answers as a walk
should: every record present and unchanged throughout, exactly once and in
order; nothing twice; what was deleted before the walk reached it, never."""
import contextlib
import random
import threading
import time
import types

import mongomock_ng
import pytest
from pymongo.errors import DuplicateKeyError

from inventory.embedded import database as embedded
from inventory.embedded.database import LockedCollection

N = 300


@pytest.fixture(autouse=True)
def a_turn_of_its_own():
    """Each test starts with a fresh turn: how long earlier tests held the
    lock (this thread's turn, kept by the lock) is not its own."""
    embedded._LOCK._held.__dict__.clear()


@pytest.fixture
def things():
    collection = LockedCollection(mongomock_ng.MongoClient().db.things)
    for i in random.Random(7).sample(range(N), N):
        collection.insert_one({"_id": f"k{i:03d}", "name": f"n{i:03d}", "group": i % 3})
    return collection


@pytest.fixture
def every_entry_a_slice(monkeypatch):
    """Every entry examined ends a slice: the walk lets others in after each."""
    monkeypatch.setattr(embedded, "_SLICE_SECONDS", -1.0)
    monkeypatch.setattr(embedded, "_CLOCK_EVERY", 1)


@pytest.fixture
def long_walks_of_its_own(monkeypatch):
    """The long walks' turn, this test's own: a walk of another test's app
    still running in the process (its background tasks, under a loaded
    machine) would otherwise hold the shared one when the test looks."""
    monkeypatch.setattr(embedded, "_LONG_WALKS", threading.Semaphore(1))


def between_slices(monkeypatch, action):
    """Run `action(call number)` where the walk lets others in (lock released)."""
    calls = []

    def let_others_run():
        calls.append(len(calls))
        action(len(calls))
    monkeypatch.setattr(embedded, "_let_others_run", let_others_run)
    return calls


def page(collection, field, backwards, query=None):
    return collection.find(query or {"group": {"$ne": 99}}, sort=[(field, -1 if backwards else 1)],
                           limit=10 * N)


@pytest.mark.parametrize("field", ["_id", "name"])
@pytest.mark.parametrize("backwards", [False, True])
def test_a_walk_that_lets_writers_in_sees_each_record_once_in_order(
        things, every_entry_a_slice, monkeypatch, field, backwards):
    ahead, behind = ("k010", "k290") if backwards else ("k290", "k010")
    step = -1 if backwards else 1

    def write(call):
        if call == 100:  # the walk has passed `behind`, not reached `ahead`
            things.delete_one({"_id": ahead})
            things.insert_one({"_id": f"{ahead}x", "name": f"n{ahead[1:]}x", "group": 0})
            things.insert_one({"_id": f"{behind}x", "name": f"n{behind[1:]}x", "group": 0})
            # moved past the walk after it was returned: not returned again
            moved, to = ("k295", "n000z") if backwards else ("k005", "n999z")
            things.update_one({"_id": moved}, {"$set": {"name": to}})
    calls = between_slices(monkeypatch, write)
    found = page(things, field, backwards)
    keys, values = [doc["_id"] for doc in found], [doc[field] for doc in found]
    assert len(calls) > 100
    assert len(keys) == len(set(keys)), "a record returned twice"
    assert values == sorted(values, reverse=backwards), "out of order"
    assert ahead not in keys and f"{ahead}x" in keys and f"{behind}x" not in keys
    untouched = [f"k{i:03d}" for i in range(N)[::step] if f"k{i:03d}" != ahead]
    assert [key for key in keys if key in set(untouched)] == [
        key for key in untouched if key in keys]
    assert set(untouched) - {"k005", "k295"} <= set(keys)


def test_a_walk_under_an_outer_hold_of_the_lock_never_lets_go(
        things, every_entry_a_slice, monkeypatch):
    # the outer hold's own release may end a turn on a slow machine (the
    # turns' rule, tested below): not what this test is about
    monkeypatch.setattr(embedded, "_TURN_SECONDS", 60.0)
    calls = between_slices(monkeypatch, lambda call: None)
    with embedded._LOCK:
        assert len(page(things, "_id", False)) == N
    assert calls == []
    assert len(page(things, "_id", False)) == N and calls


def test_only_long_walks_queue_one_behind_another(
        things, every_entry_a_slice, long_walks_of_its_own, monkeypatch):
    turn_taken = []

    def look(call):  # is the long walks' turn held (by this walk)?
        free = embedded._LONG_WALKS.acquire(blocking=False)
        if free:
            embedded._LONG_WALKS.release()
        turn_taken.append(not free)
    between_slices(monkeypatch, look)
    page(things, "_id", False)
    short = embedded._LONG_WALK_ENTRIES // embedded._CLOCK_EVERY
    assert not any(turn_taken[:short - 1]) and all(turn_taken[short:])
    assert embedded._LONG_WALKS.acquire(blocking=False), "the turn was not given back"
    embedded._LONG_WALKS.release()


def test_a_walk_that_fails_between_slices_gives_back_the_lock_and_its_turn(
        things, every_entry_a_slice, long_walks_of_its_own, monkeypatch):
    def fail(call):
        if call == embedded._LONG_WALK_ENTRIES + 5:
            raise RuntimeError("killed")
    between_slices(monkeypatch, fail)
    with pytest.raises(RuntimeError):
        page(things, "_id", False)
    released = threading.Event()
    threading.Thread(target=lambda: (things.find_one({"_id": "k001"}), released.set())).start()
    assert released.wait(10), "the lock is still held"
    assert embedded._LONG_WALKS.acquire(blocking=False)
    embedded._LONG_WALKS.release()


@pytest.mark.slow
def test_parallel_walkers_and_writers_never_see_a_record_twice_or_miss_a_still_one(
        things, monkeypatch):
    """Real threads: walkers in slices of no time while writers insert,
    delete and move records in parallel, many rounds."""
    monkeypatch.setattr(embedded, "_SLICE_SECONDS", 0.0)
    monkeypatch.setattr(embedded, "_CLOCK_EVERY", 4)
    still = {f"k{i:03d}" for i in range(N) if i % 2 == 0}  # never written
    stop, failures = threading.Event(), []

    def writer(seed):
        rng = random.Random(seed)
        while not stop.is_set():
            i = rng.randrange(1, N, 2)
            key = f"k{i:03d}"
            action = rng.random()
            if action < 0.3:
                things.delete_one({"_id": key})
            elif action < 0.6:
                with contextlib.suppress(DuplicateKeyError):  # another writer's, just now
                    things.insert_one({"_id": key, "name": f"n{i:03d}", "group": 1})
            else:
                things.update_one({"_id": key}, {"$set": {"name": f"n{rng.randrange(N):03d}y"}})

    def walker(field, backwards):
        for _ in range(40):
            found = page(things, field, backwards)
            keys, values = [doc["_id"] for doc in found], [doc[field] for doc in found]
            if len(keys) != len(set(keys)):
                failures.append(f"{field} {backwards}: a record twice")
            if values != sorted(values, reverse=backwards):
                failures.append(f"{field} {backwards}: out of order")
            if not still <= set(keys):
                failures.append(f"{field} {backwards}: missed {sorted(still - set(keys))[:3]}")

    writers = [threading.Thread(target=writer, args=(seed,)) for seed in range(3)]
    walkers = [threading.Thread(target=walker, args=(field, backwards))
               for field in ("_id", "name") for backwards in (False, True)]
    for thread in writers + walkers:
        thread.start()
    for thread in walkers:
        thread.join()
    stop.set()
    for thread in writers:
        thread.join()
    assert failures == []


# -- a summary's pass -----------------------------------------------------

SUMMARY = [{"$match": {"group": {"$ne": 99}}},
           {"$group": {"_id": {"g0": "$group"}, "count": {"$sum": 1}}}]


def counts(rows):
    return {row["_id"].get("g0"): row["count"] for row in rows}


def test_a_summary_pass_lets_others_in_and_counts_what_each_slice_reads(
        things, monkeypatch):
    """Sliced like a long walk: a record deleted before its slice is read is
    not counted, one inserted after the pass began is not either, and the
    rest are counted once."""
    monkeypatch.setattr(embedded, "_SLICE_SECONDS", -1.0)
    monkeypatch.setattr(embedded, "_SLICE_DOCUMENTS", 10)
    last_key = list(embedded.mongomock_internals.documents(
        embedded.mongomock_internals.collection_store(things._collection)))[-1]

    def write(call):
        if call == 1:
            things.delete_one({"_id": last_key})  # in the last slice: not read yet
            things.insert_one({"_id": "new", "name": "new", "group": 0})
    calls = between_slices(monkeypatch, write)
    found = counts(things.aggregate(SUMMARY))
    assert len(calls) >= N // 10 - 1
    assert sum(found.values()) == N - 1
    group = int(last_key[1:]) % 3
    assert found[group] == sum(1 for i in range(N) if i % 3 == group) - 1


def test_a_summary_under_an_outer_hold_of_the_lock_never_lets_go(things, monkeypatch):
    monkeypatch.setattr(embedded, "_TURN_SECONDS", 60.0)  # as above: slices, not turns
    monkeypatch.setattr(embedded, "_SLICE_SECONDS", -1.0)
    monkeypatch.setattr(embedded, "_SLICE_DOCUMENTS", 10)
    calls = between_slices(monkeypatch, lambda call: None)
    with embedded._LOCK:
        found = counts(things.aggregate(SUMMARY))
    assert calls == [] and sum(found.values()) == N


# -- turns across operations ----------------------------------------------

def test_a_sequence_of_operations_lets_others_run_once_its_turn_is_used(things, monkeypatch):
    """A cascade is many short operations: once a thread has held the lock
    for _TURN_SECONDS over them, it lets others run before going on; a few
    quick ones never do, nor does anything under an outer hold."""
    calls = between_slices(monkeypatch, lambda call: None)
    monkeypatch.setattr(embedded, "_TURN_SECONDS", 1.0)
    for i in range(20):
        things.find_one({"_id": f"k{i:03d}"})
    assert calls == []
    monkeypatch.setattr(embedded, "_TURN_SECONDS", 0.0)
    with embedded._LOCK:
        for i in range(20):
            things.update_one({"_id": f"k{i:03d}"}, {"$set": {"name": "x"}})
    assert len(calls) == 1  # at the outer release only
    for i in range(20, 40):
        things.delete_one({"_id": f"k{i:03d}"})
    assert len(calls) == 21  # after each operation: each used up the (empty) turn


def test_a_turn_counts_each_threads_own_time_only(things, monkeypatch):
    """Waiting for another thread's long hold does not use up this thread's
    turn: only the thread that held the lock long lets others run."""
    ran = []
    between_slices(monkeypatch, lambda call: ran.append(threading.get_ident()))
    monkeypatch.setattr(embedded, "_TURN_SECONDS", 0.05)
    held = threading.Event()

    def long_hold():
        with embedded._LOCK:
            held.set()
            time.sleep(0.1)
    other = threading.Thread(target=long_hold)
    other.start()
    held.wait()
    things.find_one({"_id": "k001"})  # waits for the other thread's hold
    other.join()
    assert ran == [other.ident]


def test_a_thread_away_from_the_lock_for_a_turn_starts_a_new_one(things, monkeypatch):
    """Operations far apart (requests one after another on a connection,
    each waiting for its client) never add up to a turn; back to back they do."""
    calls, this_thread, others = [], threading.get_ident(), embedded._let_others_run

    def let_others_run():  # counted for this test's thread only: not another app's
        if threading.get_ident() == this_thread:
            calls.append(len(calls))
        else:
            others()
    monkeypatch.setattr(embedded, "_let_others_run", let_others_run)
    monkeypatch.setattr(embedded, "_TURN_SECONDS", 0.004)
    clock, this_thread = [100.0], threading.get_ident()

    def perf_counter():
        if threading.get_ident() != this_thread:
            # the process's other threads (another test's app still running
            # on the embedded store) neither read this clock nor move it
            return time.perf_counter()
        clock[0] += 0.001  # each look at the clock: a millisecond on
        return clock[0]
    monkeypatch.setattr(embedded, "time", types.SimpleNamespace(perf_counter=perf_counter))
    for i in range(10):
        clock[0] += 1.0  # away a second between two operations
        things.find_one({"_id": f"k{i:03d}"})
    assert calls == []
    for i in range(10):  # back to back: a millisecond each
        things.find_one({"_id": f"k{i:03d}"})
    assert len(calls) >= 2


def test_the_look_for_marked_records_lets_others_in_between_its_slices(things, monkeypatch):
    """keys_having (the outbox's and the interrupted deletes' look) reads in
    slices: others write between them; a record marked ahead of the pass is
    found by it, one deleted ahead of it is not."""
    monkeypatch.setattr(embedded, "_SLICE_SECONDS", -1.0)
    monkeypatch.setattr(embedded, "_SLICE_DOCUMENTS", 10)
    order = list(things._documents())  # the pass's order: insertion
    first, last, doomed = order[0], order[-1], order[-2]
    for key in (first, doomed):
        things.update_one({"_id": key}, {"$set": {"_deleting": True}})

    def write(call):
        if call == 1:  # after the first slice: both are ahead of the pass
            things.update_one({"_id": last}, {"$set": {"_deleting": True}})
            things.delete_one({"_id": doomed})
    calls = between_slices(monkeypatch, write)
    found = things.keys_having("_deleting")
    assert len(calls) >= N // 10 - 1  # it let others in between its slices
    assert found == [first, last]
