"""Expiry taken over from mongomock (inventory/embedded/expiry.py): from the
soonest, as mongomock answers, each expiry counted as a write."""
from datetime import datetime, timedelta, timezone

import mongomock_ng

from inventory.embedded import mongomock_internals
from inventory.embedded.collection import LockedCollection


def test_expiry_walks_from_the_soonest_and_answers_as_mongomock():
    now = datetime.now(timezone.utc).replace(tzinfo=None, microsecond=0)
    plain = mongomock_ng.MongoClient().db.keys
    raw = mongomock_ng.MongoClient().db.keys
    locked = LockedCollection(raw)
    for collection in (plain, locked):
        collection.create_index([("at", 1)], expireAfterSeconds=60)
        for i in range(30):  # every third is over a minute old
            collection.insert_one({"_id": f"k{i:02d}",
                                   "at": now - timedelta(seconds=90 if i % 3 == 0 else 10)})
        collection.insert_one({"_id": "no-time", "at": "not a date"})
    assert locked.index_information() == plain.index_information()
    assert locked.find_one({"_id": "k03"}) is None and locked.find_one({"_id": "k04"})
    assert list(locked.find({}, sort=[("_id", 1)], limit=100)) == \
        list(plain.find({}, sort=[("_id", 1)]))
    # mongomock no longer sweeps
    assert mongomock_internals.ttl_indexes(mongomock_internals.collection_store(raw)) == {}
    # a document changed meanwhile expires at its new time, not its old one
    locked.update_one({"_id": "k04"}, {"$set": {"at": now - timedelta(seconds=120)}})
    assert locked.find_one({"_id": "k04"}) is None


def test_an_expiry_counts_in_writes():

    locked = LockedCollection(mongomock_ng.MongoClient().db.expiring)
    locked.create_index([("at", 1)], expireAfterSeconds=60)
    locked.insert_one({"_id": "old", "at": datetime.now(timezone.utc) - timedelta(hours=1)})
    before = locked.writes
    assert locked.find_one({"_id": "old"}) is None
    assert locked.writes > before
