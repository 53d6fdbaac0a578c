"""What the database keeps for a time only (inventory/store/retention.py):
each kept collection with its date field and age, and the sweep that
deletes only where the TTL index was refused."""
from datetime import timedelta

from inventory.store.records import stored_now
from inventory.store.retention import TTL_REFUSED


def test_every_kept_collection_is_expired_by_its_date_field(store):
    expiring = {collection.name: (field, seconds)
                for collection, field, seconds in store.expiring()}
    assert expiring["idempotency"][0] == "created_at" and expiring["sessions"][0] == "last_seen"
    assert expiring["events"] == ("at", int(store.events.retention.total_seconds()))
    assert expiring["rate_windows"] == ("expires", 0)  # each window's own end
    assert expiring["scans"][0] == "_recorded_at"  # a resource's own (SCAN_RETENTION_DAYS)


def test_the_sweep_deletes_only_what_a_refused_index_would_expire(store):
    store.organizations.create({"title": "Acme", "description": ""}, "t")  # an event
    later = stored_now() + timedelta(days=400)
    store.db.settings.delete_one({"_id": TTL_REFUSED})  # every TTL index held (FerretDB's aside)
    assert store.ttl_refused() == [] and store.sweep_expired(later) == 0
    store.db.settings.update_one({"_id": TTL_REFUSED}, {"$set": {"value": ["events"]}},
                                 upsert=True)
    assert store.sweep_expired(stored_now()) == 0  # not yet due
    assert store.sweep_expired(later) == 1 and store.events.collection.count_documents({}) == 0
