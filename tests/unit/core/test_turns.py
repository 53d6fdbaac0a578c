"""Turns between the slices of long work (inventory/core/turns.py): others
run once a slice's time is used, not before."""
import time

from inventory.core import turns


def test_a_check_lets_others_run_only_once_the_slice_is_used(monkeypatch):
    given = []
    monkeypatch.setattr(turns, "let_others_run", lambda: given.append(time.perf_counter()))
    clock = turns.Turns(seconds=0.05)
    clock.check()
    assert given == []  # within the slice
    time.sleep(0.06)
    clock.check()
    assert len(given) == 1
    clock.check()
    assert len(given) == 1  # a new slice began with the turn


def test_the_slice_defaults_to_the_stated_time():
    assert turns.Turns().seconds == turns.SLICE_SECONDS


def test_without_gevent_a_turn_is_a_thread_switch(monkeypatch):
    slept = []
    monkeypatch.delitem(__import__("sys").modules, "gevent.monkey", raising=False)
    monkeypatch.setattr(turns.time, "sleep", slept.append)
    turns.let_others_run()
    assert slept == [0]
