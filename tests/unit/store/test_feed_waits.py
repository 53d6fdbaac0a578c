"""Waiting for the feed (inventory/store/feed_waits.py): a commit in the
waiter's scope ends its wait, another organization's does not wake it, and
a revoke ends every wait."""
import threading
import time


def _append(store, key, organization):
    return store.events.append({"key": key, "type": "thing.created", "actor": "t",
                                "subject": f"/things/{key}", "organization": organization})


def _waiting(store, after, seconds, scope):
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(
        store.events.wait(after, seconds, scope)))
    thread.start()
    time.sleep(0.2)  # waiting now
    return thread, outcome


def test_a_commit_in_its_scope_ends_a_wait_and_others_do_not_wake_it(store):
    head = store.events.seen_head or None
    thread, outcome = _waiting(store, head, 10, "o1")
    woken = store.events.wakeups
    _append(store, "other", "o2")
    time.sleep(0.2)
    assert thread.is_alive() and store.events.wakeups == woken  # not one wake-up
    slot = _append(store, "mine", "o1")
    thread.join(5)
    assert outcome == [True] and store.events.seen_head == slot


def test_a_wait_times_out_false_and_a_revoke_ends_every_wait(store):
    assert store.events.wait(store.events.seen_head, 0.05, "o1") is False
    thread, outcome = _waiting(store, store.events.seen_head, 10, None)
    store.events.wake_all()
    thread.join(5)
    assert outcome == [False]


def test_listeners_hear_each_commits_organization(store):
    heard = []
    store.events.listeners.append(heard.append)
    _append(store, "a", "o1")
    _append(store, "b", None)
    assert heard == ["o1", None]
