"""A record's outbox (inventory/store/outbox.py): its events are copied into
the feed and taken out; what a writer that died left pending is published
by the sweep once stale, and only then."""
import time

from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.pages import PageRequest


def _feed(store):
    return [event["type"] for event in store.events.page(PageRequest(100)).records]


def test_a_write_publishes_its_event_and_leaves_the_outbox_empty(store):
    org = store.organizations.create({"title": "Acme", "description": ""}, "t")
    assert _feed(store) == ["organization.created"]
    stored = store.db.organizations.find_one({"_id": org["id"]})
    assert OUTBOX not in stored and OUTBOX_SINCE not in stored


def test_a_pending_event_a_writer_left_is_published_by_the_sweep_once_stale(store,
                                                                            monkeypatch):
    monkeypatch.setattr(store.events, "publish_pending", lambda *args: None)  # the writer dies
    org = store.organizations.create({"title": "Acme", "description": ""}, "t")
    monkeypatch.undo()
    assert _feed(store) == [] and store.db.organizations.find_one({"_id": org["id"]})[OUTBOX]
    assert store.events.sweep() == 0  # its writer may still be at it
    time.sleep(0.01)  # (stamps are to the millisecond)
    assert store.events.sweep(older_than=0) == 1
    assert _feed(store) == ["organization.created"]
    assert OUTBOX not in store.db.organizations.find_one({"_id": org["id"]})
    assert store.events.sweep(older_than=0) == 0  # published once
