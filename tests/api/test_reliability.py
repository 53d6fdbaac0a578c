"""Concurrent writers, retries and conditional requests lose nothing."""
from datetime import timedelta

import pytest

from tests.conftest import FERRETDB, assert_problem, client_with

# -- ETags and conditional requests -----------------------------------------


def test_get_post_and_patch_send_an_etag(client, inventory):
    response = client.post("/organizations", json={"title": "Acme"})
    created = response.headers["ETag"]
    org = response.get_json()["id"]
    assert created.startswith('"') and created.endswith('"')
    assert client.get(f"/organizations/{org}").headers["ETag"] == created
    patched = client.patch(f"/organizations/{org}", json={"title": "New"}).headers["ETag"]
    assert patched != created


def test_get_with_if_none_match_is_304(client, inventory):
    cluster = inventory.cluster()
    etag = client.get(f"/kubeclusters/{cluster['name']}").headers["ETag"]
    response = client.get(f"/kubeclusters/{cluster['name']}", headers={"If-None-Match": etag})
    assert response.status_code == 304 and response.data == b""
    assert response.headers["ETag"] == etag
    assert client.get(f"/kubeclusters/{cluster['name']}",
                      headers={"If-None-Match": '"other"'}).status_code == 200


def test_a_scan_changes_its_clusters_etag(client, inventory):
    cluster = inventory.cluster()
    before = client.get(f"/kubeclusters/{cluster['name']}").headers["ETag"]
    inventory.scan(cluster["name"], 10)
    assert client.get(f"/kubeclusters/{cluster['name']}").headers["ETag"] != before


@pytest.fixture(params=["organization", "platform", "cluster"])
def record_path(request, inventory):
    """The path of a new record of each kind that takes If-Match."""
    return {"organization": lambda: f"/organizations/{inventory.org()['id']}",
            "platform": lambda: f"/kubeplatforms/{inventory.platform()['name']}",
            "cluster": lambda: f"/kubeclusters/{inventory.cluster()['name']}"}[request.param]()


def test_patch_with_stale_if_match_is_412_and_changes_nothing(client, record_path):
    path = record_path
    stale = client.get(path).headers["ETag"]
    assert client.patch(path, json={"title": "First"}, headers={"If-Match": stale}).status_code == 200
    assert_problem(client.patch(path, json={"title": "Second"}, headers={"If-Match": stale}),
                   412, "header.if-match")
    assert client.get(path).get_json()["title"] == "First"


def test_delete_with_stale_if_match_is_412_and_deletes_nothing(client, record_path):
    path = record_path
    stale = client.get(path).headers["ETag"]
    client.patch(path, json={"title": "changed"})
    assert_problem(client.delete(path, headers={"If-Match": stale}), 412)
    assert client.get(path).status_code == 200
    fresh = client.get(path).headers["ETag"]
    assert client.delete(path, headers={"If-Match": fresh}).status_code == 204


@pytest.mark.parametrize("header", ['W/"x"', '"nope"', '"a", "b"'])
def test_if_match_that_names_no_current_strong_etag_is_412(client, inventory, header):
    org = inventory.org()
    assert_problem(client.patch(f"/organizations/{org['id']}", json={"title": "x"},
                                headers={"If-Match": header}), 412)


def test_if_match_star_or_a_list_with_the_current_etag_succeeds(client, inventory):
    org = inventory.org()
    path = f"/organizations/{org['id']}"
    assert client.patch(path, json={"title": "a"}, headers={"If-Match": "*"}).status_code == 200
    etag = client.get(path).headers["ETag"]
    assert client.patch(path, json={"title": "b"},
                        headers={"If-Match": f'"old", {etag}'}).status_code == 200


def test_if_match_on_a_missing_record_is_404(client):
    assert_problem(client.patch("/kubeplatforms/ghost", json={"title": "x"},
                                headers={"If-Match": '"x"'}), 404)


# -- idempotent creates -----------------------------------------------------


def test_same_idempotency_key_and_body_replays_the_first_answer(client, inventory, store):
    cluster = inventory.cluster()
    path, headers = f"/kubeclusters/{cluster['name']}/scans", {"Idempotency-Key": "scan-42"}
    first = client.post(path, json={"scanned_on": 1700000000}, headers=headers)
    again = client.post(path, data='{ "scanned_on" :1700000000 }', headers=headers,
                        content_type="application/json")
    assert first.status_code == again.status_code == 201
    assert again.get_json() == first.get_json()
    assert again.headers["Location"] == first.headers["Location"]
    assert again.headers["ETag"] == first.headers["ETag"]
    assert again.headers["Idempotent-Replayed"] == "true"
    assert store.scans.collection.count_documents({}) == 1


def test_same_idempotency_key_with_another_body_is_422(client):
    headers = {"Idempotency-Key": "k1"}
    assert client.post("/organizations", json={"title": "A"}, headers=headers).status_code == 201
    assert_problem(client.post("/organizations", json={"title": "B"}, headers=headers), 422,
                   "header.idempotency-key")


def test_idempotency_keys_belong_to_their_caller(app, client):
    other_token = client.post("/tokens", json={"name": "other", "role": "admin"}).get_json()["token"]
    other = client_with(app, other_token)
    headers = {"Idempotency-Key": "shared"}
    first = client.post("/organizations", json={"title": "A"}, headers=headers).get_json()
    second = other.post("/organizations", json={"title": "A"}, headers=headers).get_json()
    assert first["id"] != second["id"]


def test_a_failed_request_does_not_keep_its_key(client, inventory):
    headers = {"Idempotency-Key": "retry-me"}
    body = {"name": "c", "platform": "later", "environment": "dev", "version": "1.30"}
    assert_problem(client.post("/kubeclusters", json=body, headers=headers), 422)
    inventory.platform(name="later")
    assert client.post("/kubeclusters", json=body, headers=headers).status_code == 201


def test_expired_keys_are_forgotten(client, store):
    from datetime import timedelta

    headers = {"Idempotency-Key": "old"}
    client.post("/organizations", json={"title": "A"}, headers=headers)
    store.idempotency.collection.update_many({}, {"$set": {"created_at": store.idempotency.
                                                           collection.find_one()["created_at"]
                                                           - timedelta(hours=25)}})
    again = client.post("/organizations", json={"title": "A"}, headers=headers)
    assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers


def test_idempotency_keys_expire_by_a_ttl_index(store):
    indexes = store.db.idempotency.index_information().values()
    if FERRETDB:  # it refuses TTL indexes: the service's sweep (tests/api/test_retention.py)
        assert "idempotency" in store.ttl_refused()
        assert any(i["key"] == [("created_at", 1)] for i in indexes)
        return
    assert any(i.get("expireAfterSeconds") == 86400 for i in indexes)


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there", "naïve"])
def test_malformed_idempotency_key_is_422(client, key):
    assert_problem(client.post("/organizations", json={"title": "A"},
                               headers={"Idempotency-Key": key}), 422, "header.idempotency-key")


def test_idempotency_key_is_refused_when_making_tokens(client):
    assert_problem(client.post("/tokens", json={"name": "t", "role": "reader"},
                               headers={"Idempotency-Key": "k"}), 422, "header.idempotency-key")


# -- a reservation whose request died ----------------------------------------


def _as_if_it_died(store, age):
    """Make the one stored key look like a request that reserved it `age`
    ago and died before answering (a crash, a killed worker)."""
    from datetime import datetime, timezone

    now = datetime.now(timezone.utc).replace(tzinfo=None)  # naive UTC, as stored
    store.idempotency.collection.update_many({}, {"$set": {"state": "pending",
                                                           "created_at": now - age},
                                                  "$unset": {"answer": ""}})


def test_a_key_whose_request_died_is_taken_over_after_its_lease(client, store):
    from inventory.store.idempotency import LEASE

    headers = {"Idempotency-Key": "died"}
    first = client.post("/organizations", json={"title": "A"}, headers=headers)
    _as_if_it_died(store, LEASE + timedelta(seconds=1))
    again = client.post("/organizations", json={"title": "A"}, headers=headers)
    assert again.status_code == 201 and "Idempotent-Replayed" not in again.headers
    assert again.get_json()["id"] != first.get_json()["id"]  # it ran again
    replay = client.post("/organizations", json={"title": "A"}, headers=headers)
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.get_json()["id"] == again.get_json()["id"]


def test_a_key_within_its_lease_is_still_in_progress(client, store):
    headers = {"Idempotency-Key": "busy"}
    client.post("/organizations", json={"title": "A"}, headers=headers)
    _as_if_it_died(store, timedelta(seconds=5))
    assert_problem(client.post("/organizations", json={"title": "A"}, headers=headers), 409)


# -- a delete the process did not live to finish ----------------------------


@pytest.mark.parametrize("level", ["organization", "platform", "cluster"])
def test_a_repeated_delete_finishes_a_crashed_one(client, inventory, store, level):
    org = inventory.org()
    platforms = [inventory.platform(org=org["id"]) for _ in range(2)]
    clusters = [inventory.cluster(platform=p["name"]) for p in platforms for _ in range(2)]
    for cluster in clusters:
        inventory.scan(cluster["name"], 10)
        inventory.scan(cluster["name"], 20)
    # the state a delete leaves when its process dies midway: mark set, part swept
    if level == "organization":
        path = f"/organizations/{org['id']}?force=true"
        store.organizations.mark_deleting({"_id": org["id"]})
        store.platforms.delete_where({"_id": platforms[0]["name"]})
    elif level == "platform":
        path = f"/kubeplatforms/{platforms[0]['name']}?force=true"
        store.platforms.mark_deleting({"_id": platforms[0]["name"]})
        store.clusters.delete_where({"_id": clusters[0]["name"]})
    else:
        path = f"/kubeclusters/{clusters[0]['name']}"
        store.clusters.mark_deleting({"_id": clusters[0]["name"]})
        store.scans.collection.delete_one({"cluster": clusters[0]["id"]})
    record = path.split("?")[0]
    assert_problem(client.get(record), 404)  # a marked record reads as gone
    assert client.delete(path).status_code == 204
    assert_problem(client.get(record), 404)
    survivors = {c["name"] for c in client.get("/kubeclusters").get_json()["results"]}
    gone = {"organization": {c["name"] for c in clusters},
            "platform": {c["name"] for c in clusters[:2]},
            "cluster": {clusters[0]["name"]}}[level]
    assert survivors == {c["name"] for c in clusters} - gone
    assert store.db.scans.count_documents({}) == 2 * len(survivors)
    assert store.db[f"{level}s" if level != "organization" else "organizations"].count_documents(
        {"_deleting": True}) == 0
