"""The change feed's front (inventory/store/events.py): what `EventStore`
declares of its own on top of its parts (tested in test_outbox,
test_feed_slots, test_feed_reads, test_feed_waits): the fields a reader
filters the feed by, `changed` read from the stored list of changes; an
event's key unique in the feed, so that an event is published once; the
feed kept for its retention days."""
from datetime import timedelta

import pytest

from inventory.core import filtering
from inventory.core.errors import BadFilter
from inventory.store.events import EventStore
from inventory.store.pages import PageRequest


def _append(store, key, changes=None, **fields):
    event = store.events.event("cluster", "updated", key, f"/kubeclusters/{key}",
                               {"name": key}, None, changes)
    return store.events.append({**event, **fields})


def _subjects(store, text):
    page = store.events.page(PageRequest(50, filtering.parse(text)))
    return [event["subject"] for event in page.records]


def test_changed_finds_the_events_whose_update_changed_that_field(store):
    _append(store, "a", {"readiness.status": {"from": "ready", "to": "blocked"}})
    _append(store, "b", {"environment": {"from": "dev", "to": "prod"}})
    _append(store, "c")  # a create: no changes
    assert _subjects(store, 'changed="readiness.status"') == ["/kubeclusters/a"]
    assert _subjects(store, 'changed="environment"') == ["/kubeclusters/b"]


def test_the_feed_filters_by_its_declared_fields_and_refuses_others(store):
    _append(store, "a", actor="alice")
    _append(store, "b", actor="bob")
    assert _subjects(store, 'actor="bob" AND type="cluster.updated"') == ["/kubeclusters/b"]
    with pytest.raises(BadFilter):  # stored, but no filter field of the feed
        store.events.page(PageRequest(50, filtering.parse('key="a"')))


def test_an_event_appended_twice_is_published_once(store):
    # the outbox and its sweeper may both publish an event: its key is unique
    event = store.events.event("cluster", "created", "k1", "/kubeclusters/k1", {}, None)
    first = store.events.append(event)
    assert store.events.append(dict(event)) == first
    assert store.events.collection.count_documents({"key": "k1"}) == 1


def test_the_feed_keeps_events_for_its_retention_days(store):
    assert EventStore(store.db, retention_days=7).retention == timedelta(days=7)
    expiring = {collection.name: (field, seconds)
                for collection, field, seconds in store.expiring()}
    assert expiring["events"] == ("at", int(store.events.retention.total_seconds()))
    # its TTL is the store's to make, not among the feed's own indexes
    assert all(keys != [("at", 1)] for keys, _ in store.events.indexes())
