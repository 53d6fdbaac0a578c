"""A long walk of the embedded store lets others in between its slices
(inventory/embedded/lock.py, "Long walks"; inventory/embedded/reads.py) and
still answers as a walk should: every record present and unchanged
throughout, exactly once and in order; nothing twice; what was deleted
before the walk reached it, never."""
import contextlib
import random
import threading

import pytest
from pymongo.errors import DuplicateKeyError

from inventory.embedded import lock
from tests.support.mongomock_pairs import N

pytestmark = pytest.mark.usefixtures("a_turn_of_its_own")


def page(collection, field, backwards, query=None):
    return collection.find(query or {"group": {"$ne": 99}}, sort=[(field, -1 if backwards else 1)],
                           limit=10 * N)


@pytest.mark.parametrize("field", ["_id", "name"])
@pytest.mark.parametrize("backwards", [False, True])
def test_a_walk_that_lets_writers_in_sees_each_record_once_in_order(
        between_slices, things, every_entry_a_slice, monkeypatch, field, backwards):
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
    calls = between_slices(write)
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
        between_slices, things, every_entry_a_slice, monkeypatch):
    # the outer hold's own release may end a turn on a slow machine (the
    # turns' rule, tested below): not what this test is about
    monkeypatch.setattr(lock, "TURN_SECONDS", 60.0)
    calls = between_slices(lambda call: None)
    with lock.LOCK:
        assert len(page(things, "_id", False)) == N
    assert calls == []
    assert len(page(things, "_id", False)) == N and calls


def test_only_long_walks_queue_one_behind_another(
        between_slices, things, every_entry_a_slice, long_walks_of_its_own, monkeypatch):
    turn_taken = []

    def look(call):  # is the long walks' turn held (by this walk)?
        free = lock.LONG_WALKS.acquire(blocking=False)
        if free:
            lock.LONG_WALKS.release()
        turn_taken.append(not free)
    between_slices(look)
    page(things, "_id", False)
    short = lock.LONG_WALK_ENTRIES // lock.CLOCK_EVERY
    assert not any(turn_taken[:short - 1]) and all(turn_taken[short:])
    assert lock.LONG_WALKS.acquire(blocking=False), "the turn was not given back"
    lock.LONG_WALKS.release()


def test_a_walk_that_fails_between_slices_gives_back_the_lock_and_its_turn(
        between_slices, things, every_entry_a_slice, long_walks_of_its_own, monkeypatch):
    def fail(call):
        if call == lock.LONG_WALK_ENTRIES + 5:
            raise RuntimeError("killed")
    between_slices(fail)
    with pytest.raises(RuntimeError):
        page(things, "_id", False)
    released = threading.Event()
    threading.Thread(target=lambda: (things.find_one({"_id": "k001"}), released.set())).start()
    assert released.wait(10), "the lock is still held"
    assert lock.LONG_WALKS.acquire(blocking=False)
    lock.LONG_WALKS.release()


@pytest.mark.slow
def test_parallel_walkers_and_writers_never_see_a_record_twice_or_miss_a_still_one(
        things, monkeypatch):
    """Real threads: walkers in slices of no time while writers insert,
    delete and move records in parallel, many rounds."""
    monkeypatch.setattr(lock, "SLICE_SECONDS", 0.0)
    monkeypatch.setattr(lock, "CLOCK_EVERY", 4)
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


def test_the_look_for_marked_records_lets_others_in_between_its_slices(
        between_slices, things, raw_things, monkeypatch):
    """keys_having (the outbox's and the interrupted deletes' look) reads in
    slices: others write between them; a record marked ahead of the pass is
    found by it, one deleted ahead of it is not."""
    monkeypatch.setattr(lock, "SLICE_SECONDS", -1.0)
    monkeypatch.setattr(lock, "SLICE_DOCUMENTS", 10)
    order = [d["_id"] for d in raw_things.find({}, {"_id": 1})]  # the pass's order: insertion
    first, last, doomed = order[0], order[-1], order[-2]
    for key in (first, doomed):
        things.update_one({"_id": key}, {"$set": {"_deleting": True}})

    def write(call):
        if call == 1:  # after the first slice: both are ahead of the pass
            things.update_one({"_id": last}, {"$set": {"_deleting": True}})
            things.delete_one({"_id": doomed})
    calls = between_slices(write)
    found = things.keys_having("_deleting")
    assert len(calls) >= N // 10 - 1  # it let others in between its slices
    assert found == [first, last]


def test_a_pass_in_the_kept_key_order_sees_each_record_once(
        between_slices, things, monkeypatch):
    """Once the key order is kept (a page by `_id` built it), a pass walks a
    copy of it: keys inserted between its slices, before or after where it
    stands, shift nothing under it (no record twice, none skipped), and are
    not seen (inserted after the pass began)."""
    monkeypatch.setattr(lock, "SLICE_SECONDS", -1.0)
    monkeypatch.setattr(lock, "SLICE_DOCUMENTS", 10)
    assert [d["_id"] for d in things.find({}, sort=[("_id", 1)], limit=3)] == \
        ["k000", "k001", "k002"]  # the key order, now kept
    for i in range(N):
        things.update_one({"_id": f"k{i:03d}"}, {"$set": {"_deleting": True}})

    def write(call):
        things.insert_one({"_id": f"a{call:03d}", "_deleting": True})  # before every key
        things.insert_one({"_id": f"z{call:03d}", "_deleting": True})  # after every key
    calls = between_slices(write)
    found = things.keys_having("_deleting")
    assert len(calls) >= N // 10 - 1
    assert found == [f"k{i:03d}" for i in range(N)]
