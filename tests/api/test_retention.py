"""Scan retention (time and count per cluster) and key expiry by TTL."""
from datetime import timedelta

import pytest

from inventory.store import retention as store_module
from inventory.store.records import stored_now
from inventory.store.retention import TTL_REFUSED
from tests.conftest import FERRETDB, REAL_MONGO, make_config


@pytest.fixture
def config():
    return make_config(SCAN_RETENTION_COUNT=5, SCAN_RETENTION_DAYS=30)


def scans_of(client, cluster):
    return [s["scanned_on"] for s in
            client.get(f"/kubeclusters/{cluster}/scans?limit=100").get_json()["results"]]


def test_a_cluster_keeps_its_newest_scans_up_to_the_count(client, inventory):
    cluster = inventory.cluster()["name"]
    for scanned_on in range(1000, 1008):
        inventory.scan(cluster, scanned_on)
    assert scans_of(client, cluster) == [1003, 1004, 1005, 1006, 1007]
    inventory.scan(cluster, 10)  # older than every scan kept: recorded, then trimmed
    assert scans_of(client, cluster) == [1003, 1004, 1005, 1006, 1007]
    assert client.get(f"/kubeclusters/{cluster}").get_json()["last_scanned_on"] == 1007


def test_other_clusters_scans_are_untouched(client, inventory):
    first, second = inventory.cluster()["name"], inventory.cluster()["name"]
    for scanned_on in range(3):
        inventory.scan(second, scanned_on)
    for scanned_on in range(10):
        inventory.scan(first, scanned_on)
    assert scans_of(client, second) == [0, 1, 2]


def test_scans_expire_by_a_ttl_index_after_the_retention_time(client, inventory, store):
    indexes = store.scans.collection.index_information()
    if FERRETDB:  # it refuses TTL indexes: a plain one serves the service's sweep (below)
        assert "scans" in store.ttl_refused()
        assert any(info["key"] == [("_recorded_at", 1)] for info in indexes.values())
        return
    assert {"key": [("_recorded_at", 1)], "expireAfterSeconds": 30 * 24 * 3600}.items() <= \
        next(info for info in indexes.values() if info["key"] == [("_recorded_at", 1)]).items()
    cluster = inventory.cluster()
    for scanned_on in (100, 200):
        inventory.scan(cluster["name"], scanned_on)
    if REAL_MONGO:
        return  # MongoDB's TTL monitor runs once a minute: the index is what is checked
    old = store.scans.collection.find_one({"scanned_on": 200})
    store.scans.collection.update_one({"_id": old["_id"]}, {"$set": {
        "_recorded_at": stored_now() - timedelta(days=31)}})
    assert scans_of(client, cluster["name"]) == [100]
    # the cluster's last scan time is its own: expiry does not lower it
    assert client.get(f"/kubeclusters/{cluster['name']}").get_json()["last_scanned_on"] == 200


def test_idempotency_keys_expire_on_the_embedded_store_without_a_sweep(client, store,
                                                                     mongomock_ttl_indexes):
    if REAL_MONGO:
        pytest.skip("the embedded store's expiry")
    for n in range(3):
        client.post("/organizations", json={"title": "Acme"}, headers={"Idempotency-Key": f"k{n}"})
    collection = store.idempotency.collection
    collection.update_one({"_id": "env:INVENTORY_ADMIN_TOKEN:k1"},
                          {"$set": {"created_at": stored_now() - timedelta(hours=25)}})
    assert collection.find_one({"_id": "env:INVENTORY_ADMIN_TOKEN:k1"}) is None
    assert collection.find_one({"_id": "env:INVENTORY_ADMIN_TOKEN:k0"}) is not None
    assert mongomock_ttl_indexes(collection) == {}


def test_a_large_count_is_trimmed_amortized_and_never_held_past_a_tenth_more(app, client,
                                                                             inventory, store):
    store.scans.retention_count = 40  # trimmed once every 4 scans
    cluster = inventory.cluster()["name"]
    trims, real_trim = [], store.scans.trim
    store.scans.trim = lambda cluster_id: (trims.append(cluster_id), real_trim(cluster_id))
    held = []
    for scanned_on in range(100):
        inventory.scan(cluster, scanned_on)
        held.append(len(scans_of(client, cluster)))
    assert len(trims) == 25  # not one trim per scan
    assert max(held) <= 40 + 4 - 1  # at most a tenth more between trims
    assert scans_of(client, cluster)[-1] == 99 and held[-1] == 40  # the newest kept


def test_where_ttl_indexes_are_refused_the_service_sweeps_what_they_would_expire(
        client, inventory, store, monkeypatch):
    """FerretDB refuses TTL indexes (code 238): create-indexes notes which
    were refused, and the serving processes delete what they would have
    expired, oldest first, a slice at a time."""
    expiring = {collection.name for collection, _, _ in store.expiring()}
    assert expiring == {"idempotency", "events", "scans", "sessions", "rate_windows"}
    if FERRETDB:
        assert set(store.ttl_refused()) == expiring
    else:  # the embedded store holds them: as create-indexes notes a refusal
        assert store.ttl_refused() == []
        store.db.settings.update_one({"_id": TTL_REFUSED}, {"$set": {"value": sorted(expiring)}},
                                     upsert=True)
    monkeypatch.setattr(store_module, "RETENTION_SLICE", 2)
    cluster = inventory.cluster()["name"]
    for scanned_on in range(5):
        inventory.scan(cluster, scanned_on)
    client.post("/organizations", json={"title": "Acme"}, headers={"Idempotency-Key": "k"})
    events = store.events.collection.count_documents({})
    assert store.sweep_expired(stored_now() + timedelta(hours=23)) == 0
    assert store.sweep_expired(stored_now() + timedelta(hours=25)) == 1  # the key: 24 hours
    assert store.idempotency.collection.count_documents({}) == 0
    assert store.sweep_expired(stored_now() + timedelta(days=31)) == events + 5  # 30 days each
    assert scans_of(client, cluster) == []
    assert store.events.collection.count_documents({}) == 0
    assert client.get(f"/kubeclusters/{cluster}").status_code == 200  # what is kept stays


def test_the_sweep_is_said_once_only_where_ttl_indexes_were_refused(store, caplog):
    """Which were refused is read at each sweep, never at start (a start
    while the database is away must not fail: test_database_outage.py), and
    said once by a process, when it first finds them."""
    if not FERRETDB:
        assert store.sweep_expired() == 0  # TTL indexes held: nothing to sweep, nothing said
        assert "refused TTL" not in caplog.text
        store.db.settings.update_one({"_id": TTL_REFUSED}, {"$set": {"value": ["scans"]}},
                                     upsert=True)
    for _ in range(3):
        store.sweep_expired()
    assert caplog.text.count("The database refused TTL indexes") == 1
