"""The demo estate (inventory/cli/demo.py)."""
import contextvars

from inventory.cli.demo import load_demo
from inventory.store import events


def test_the_demos_events_are_by_whoever_made_its_records(store):
    def load_as_someone():
        events.acting_as("someone")
        assert load_demo(store) is True
        return events._actor.get()
    # its own context: the caller's actor is left as it was
    assert contextvars.copy_context().run(load_as_someone) == "someone"
    feed = list(store.events.collection.find({"type": {"$exists": True}}))
    assert len(feed) > 70  # 3 organizations, 4 platforms, 10 clusters, 70 scans
    assert {event["actor"] for event in feed} == {"demo"}
    objects = [store.events.get(f"evt_{event['_id']}")["object"] for event in feed]
    authors = {record.get("created_by") for record in objects} - {None}  # scans keep none
    assert authors == {"demo"}
