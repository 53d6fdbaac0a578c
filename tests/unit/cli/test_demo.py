"""The demo estate (inventory/cli/demo.py)."""
from inventory.cli.demo import load_demo
from inventory.store import events


def test_the_demos_events_are_by_whoever_made_its_records(store):
    assert load_demo(store) is True
    feed = list(store.events.collection.find({"type": {"$exists": True}}))
    assert len(feed) > 70  # 3 organizations, 4 platforms, 10 clusters, 70 scans
    assert {event["actor"] for event in feed} == {"demo"}
    authors = {event["object"].get("created_by") for event in feed} - {None}  # scans keep none
    assert authors == {"demo"}
    assert events._actor.get() == "system"  # the caller's context is not the demo's
