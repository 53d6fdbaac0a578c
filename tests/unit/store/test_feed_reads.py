"""Reading the feed (inventory/store/feed_reads.py): resume points checked,
pages in feed order or newest first, one event in the caller's scope, and
what the webhooks' deliverer follows."""
import pytest

from inventory.core.errors import BadResumePoint, EventExpired, NotFound
from inventory.store.feed_reads import event_slot
from inventory.store.pages import PageRequest


def _append(store, key, organization=None):
    return store.events.append({"key": key, "type": "thing.created", "actor": "t",
                                "subject": f"/things/{key}",
                                **({"organization": organization} if organization else {})})


def test_a_resume_point_is_an_event_id_the_feed_still_keeps(store):
    slots = [_append(store, f"k{i}") for i in range(3)]
    assert store.events.resolve(f"evt_{slots[1]}", "query.after") == slots[1]
    assert event_slot("evt_" + slots[0]) == slots[0] and event_slot(slots[0]) is None
    with pytest.raises(BadResumePoint):
        store.events.resolve("evt_nothex", "query.after")
    store.events.collection.delete_one({"_id": slots[0]})  # aged out
    with pytest.raises(EventExpired):
        store.events.resolve(f"evt_{slots[0]}", "query.after")


def test_pages_in_feed_order_and_newest_first_in_the_callers_scope(store):
    for i, org in enumerate(("o1", "o2", "o1", None)):
        _append(store, f"k{i}", org)
    forwards = store.events.page(PageRequest(10))
    assert [e["subject"] for e in forwards.records] == [f"/things/k{i}" for i in range(4)]
    scoped = store.events.page(PageRequest(10, scope="o1", backwards=True))
    assert [e["subject"] for e in scoped.records] == ["/things/k2", "/things/k0"]
    one = scoped.records[0]["id"]
    assert store.events.get(one, scope="o1")["subject"] == "/things/k2"
    with pytest.raises(NotFound):
        store.events.get(one, scope="o2")


def test_the_deliverer_follows_each_organizations_newest_event(store):
    slots = [_append(store, f"k{i}", org) for i, org in enumerate(("o1", "o2", "o1", None))]
    end, newest, more = store.events.organizations_after(None)
    assert end == slots[-1] and more is False
    assert newest == {"o1": slots[2], "o2": slots[1], None: slots[3]}
    assert store.events.organizations_after(slots[-1]) == (slots[-1], {}, False)
