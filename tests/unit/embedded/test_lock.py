"""The store's lock (inventory/embedded/lock.py): a sequence of operations
lets others run once its turn is used, counting each thread's own time."""
import threading
import time
import types

import pytest

from inventory.embedded import lock

pytestmark = pytest.mark.usefixtures("a_turn_of_its_own")


def test_a_sequence_of_operations_lets_others_run_once_its_turn_is_used(
        between_slices, things, monkeypatch):
    """A cascade is many short operations: once a thread has held the lock
    for _TURN_SECONDS over them, it lets others run before going on; a few
    quick ones never do, nor does anything under an outer hold."""
    calls = between_slices(lambda call: None)
    monkeypatch.setattr(lock, "TURN_SECONDS", 1.0)
    for i in range(20):
        things.find_one({"_id": f"k{i:03d}"})
    assert calls == []
    monkeypatch.setattr(lock, "TURN_SECONDS", 0.0)
    with lock.LOCK:
        for i in range(20):
            things.update_one({"_id": f"k{i:03d}"}, {"$set": {"name": "x"}})
    assert len(calls) == 1  # at the outer release only
    for i in range(20, 40):
        things.delete_one({"_id": f"k{i:03d}"})
    assert len(calls) == 21  # after each operation: each used up the (empty) turn


def test_a_turn_counts_each_threads_own_time_only(between_slices, things, monkeypatch):
    """Waiting for another thread's long hold does not use up this thread's
    turn: only the thread that held the lock long lets others run."""
    ran = []
    between_slices(lambda call: ran.append(threading.get_ident()))
    monkeypatch.setattr(lock, "TURN_SECONDS", 0.05)
    held = threading.Event()

    def long_hold():
        with lock.LOCK:
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
    calls, this_thread, others = [], threading.get_ident(), lock.yield_to_others

    def let_others_run():  # counted for this test's thread only: not another app's
        if threading.get_ident() == this_thread:
            calls.append(len(calls))
        else:
            others()
    monkeypatch.setattr(lock, "yield_to_others", let_others_run)
    monkeypatch.setattr(lock, "TURN_SECONDS", 0.004)
    # the fake clock goes on from the real one: an earlier test's operation in
    # this thread left the lock its own (real) time of leaving
    clock, this_thread = [time.perf_counter()], threading.get_ident()

    def perf_counter():
        if threading.get_ident() != this_thread:
            # the process's other threads (another test's app still running
            # on the embedded store) neither read this clock nor move it
            return time.perf_counter()
        clock[0] += 0.001  # each look at the clock: a millisecond on
        return clock[0]
    monkeypatch.setattr(lock, "time", types.SimpleNamespace(perf_counter=perf_counter))
    for i in range(10):
        clock[0] += 1.0  # away a second between two operations
        things.find_one({"_id": f"k{i:03d}"})
    assert calls == []
    for i in range(10):  # back to back: a millisecond each
        things.find_one({"_id": f"k{i:03d}"})
    assert len(calls) >= 2
