"""Concurrent writers, retries and conditional requests lose nothing."""
import http.client
import json
import threading

import pytest
from werkzeug.serving import make_server

from tests.conftest import ADMIN_TOKEN, assert_problem, client_with

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
    assert any(i.get("expireAfterSeconds") == 86400 for i in indexes)


@pytest.mark.parametrize("key", ["", "x" * 256, "tab\there", "naïve"])
def test_malformed_idempotency_key_is_422(client, key):
    assert_problem(client.post("/organizations", json={"title": "A"},
                               headers={"Idempotency-Key": key}), 422, "header.idempotency-key")


def test_idempotency_key_is_refused_when_making_tokens(client):
    assert_problem(client.post("/tokens", json={"name": "t", "role": "reader"},
                               headers={"Idempotency-Key": "k"}), 422, "header.idempotency-key")


# -- races, with real threads against a served app --------------------------


class Answer:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body


@pytest.fixture
def served(app):
    """The app on a real threaded HTTP server on loopback; yields a caller."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def call(method, path, body=None, headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
        connection.request(method, path, body=None if body is None else json.dumps(body),
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}",
                                    "Content-Type": "application/json", **(headers or {})})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return Answer(response.status, response.headers, json.loads(data) if data else None)
    yield call
    server.shutdown()


def run_together(calls):
    """Run the callables at once (released by a barrier); their results in order."""
    barrier = threading.Barrier(len(calls))
    results = [None] * len(calls)

    def run(index, fn):
        barrier.wait()
        results[index] = fn()
    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}


def test_parallel_creates_of_one_slug_give_one_201_and_the_rest_409(served):
    org = served("POST", "/organizations", {"title": "Acme"}).body["id"]
    for round_ in range(5):
        body = {"name": f"same-{round_}", "organization": org, **PLATFORM}
        statuses = [a.status for a in run_together(
            [lambda: served("POST", "/kubeplatforms", body)] * 12)]
        assert statuses.count(201) == 1 and statuses.count(409) == 11, statuses


def test_parallel_patches_with_if_match_lose_no_update(served):
    path = f"/organizations/{served('POST', '/organizations', {'title': 'Acme'}).body['id']}"
    for _ in range(5):
        etag = served("GET", path).headers["ETag"]  # every writer read this version
        answers = run_together([lambda i=i: served("PATCH", path, {"description": f"writer {i}"},
                                                   {"If-Match": etag}) for i in range(8)])
        statuses = [a.status for a in answers]
        assert statuses.count(200) == 1 and statuses.count(412) == 7, statuses
        winner = next(a.body for a in answers if a.status == 200)
        assert served("GET", path).body["description"] == winner["description"]


def test_parallel_retries_of_one_scan_make_one_scan(served, store):
    org = served("POST", "/organizations", {"title": "Acme"}).body["id"]
    served("POST", "/kubeplatforms", {"name": "p", "organization": org, **PLATFORM})
    served("POST", "/kubeclusters", {"name": "c", "platform": "p", "environment": "dev",
                                     "version": "1.30"})
    answers = run_together([lambda: served("POST", "/kubeclusters/c/scans", {"scanned_on": 7},
                                           {"Idempotency-Key": "one-scan"})] * 10)
    statuses = sorted(a.status for a in answers)
    assert statuses.count(201) >= 1 and set(statuses) <= {201, 409}, statuses
    assert store.scans.collection.count_documents({}) == 1


def orphans(store):
    """Children whose parent is gone."""
    org_ids = {d["_id"] for d in store.db.organizations.find({})}
    platforms = {d["_id"] for d in store.db.platforms.find({})}
    cluster_ids = {d["id"] for d in store.db.clusters.find({})}
    return ([d["_id"] for d in store.db.platforms.find({}) if d["organization"] not in org_ids]
            + [d["_id"] for d in store.db.clusters.find({}) if d["platform"] not in platforms]
            + [d["_id"] for d in store.db.scans.find({}) if d["cluster"] not in cluster_ids])


def test_clusters_created_while_their_platform_is_deleted_are_never_orphaned(served, store):
    org = served("POST", "/organizations", {"title": "Acme"}).body["id"]
    for round_ in range(8):
        platform = f"p{round_}"
        served("POST", "/kubeplatforms", {"name": platform, "organization": org, **PLATFORM})
        creates = [lambda i=i: served("POST", "/kubeclusters", {
            "name": f"c{round_}-{i}", "platform": platform, "environment": "dev",
            "version": "1.30"}) for i in range(6)]
        delete = [lambda: served("DELETE", f"/kubeplatforms/{platform}?force=true")]
        answers = run_together(creates + delete)
        assert answers[-1].status == 204
        assert {a.status for a in answers[:-1]} <= {201, 422}
        assert orphans(store) == []
        for answer in answers[:-1]:  # a 201 whose cluster went with the platform is fine
            if answer.status == 201:
                assert served("GET", f"/kubeclusters/{answer.body['name']}").status == 404


def test_forced_delete_of_an_organization_racing_creates_leaves_no_orphans(served, store):
    for round_ in range(5):
        org = served("POST", "/organizations", {"title": f"O{round_}"}).body["id"]
        served("POST", "/kubeplatforms", {"name": f"base{round_}", "organization": org, **PLATFORM})
        served("POST", "/kubeclusters", {"name": f"basec{round_}", "platform": f"base{round_}",
                                         "environment": "dev", "version": "1.30"})
        calls = [lambda i=i: served("POST", "/kubeplatforms", {
                     "name": f"r{round_}-{i}", "organization": org, **PLATFORM}) for i in range(4)]
        calls += [lambda i=i: served("POST", "/kubeclusters", {
                      "name": f"rc{round_}-{i}", "platform": f"base{round_}",
                      "environment": "dev", "version": "1.30"}) for i in range(4)]
        calls += [lambda: served("POST", f"/kubeclusters/basec{round_}/scans", {})] * 4
        calls += [lambda: served("DELETE", f"/organizations/{org}?force=true")]
        answers = run_together(calls)
        assert answers[-1].status == 204
        assert all(a.status < 500 for a in answers)
        assert orphans(store) == []
        assert store.db.platforms.count_documents({"organization": org}) == 0
