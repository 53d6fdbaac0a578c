import time

import pytest

from schemas.scans import MAX_SCANNED_ON, SCANNED_ON_AHEAD_SECONDS
from tests.conftest import assert_problem, walk


def test_scan_records_cluster_id_and_given_time(client, inventory):
    cluster = inventory.cluster()
    response = client.post(f"/kubeclusters/{cluster['name']}/scans", json={"scanned_on": 1700000000})
    assert response.status_code == 201
    scan = response.get_json()
    assert scan["cluster"] == cluster["id"] and scan["scanned_on"] == 1700000000
    assert scan["id"].startswith("k8scs_")
    assert client.get(response.headers["Location"]).get_json() == scan


def test_scan_without_body_is_taken_now(client, inventory):
    cluster = inventory.cluster()
    before = int(time.time())
    scan = client.post(f"/kubeclusters/{cluster['name']}/scans").get_json()
    assert before <= scan["scanned_on"] <= int(time.time())


def test_cluster_sent_in_a_scan_body_is_ignored(client, inventory):
    cluster = inventory.cluster()
    scan = client.post(f"/kubeclusters/{cluster['id']}/scans",
                       json={"cluster": "k8scl_other", "scanned_on": 5}).get_json()
    assert scan["cluster"] == cluster["id"]


def test_scans_are_listed_in_scanned_on_order_across_pages(client, inventory):
    cluster = inventory.cluster()
    other = inventory.cluster()
    times = [1700000500, 10, 1700000000, int(time.time()) + 60, 10, 0]  # a clock a minute fast too
    for t in times:
        inventory.scan(cluster["name"], t)
    inventory.scan(other["name"], 50)
    records, pages = walk(client, f"/kubeclusters/{cluster['name']}/scans", limit=4)
    assert [s["scanned_on"] for s in records] == sorted(times)
    assert {s["cluster"] for s in records} == {cluster["id"]}
    assert pages == 2


def test_last_scanned_on_is_the_newest_scan(client, inventory):
    cluster = inventory.cluster()
    for t in (200, 500, 300):
        inventory.scan(cluster["name"], t)
    assert client.get(f"/kubeclusters/{cluster['name']}").get_json()["last_scanned_on"] == 500


@pytest.mark.parametrize("value", [-1, 1.5, "1700000000", True, None, 253402300800, 10**30])
def test_bad_scanned_on_is_422(client, inventory, value):
    cluster = inventory.cluster()
    response = client.post(f"/kubeclusters/{cluster['name']}/scans", json={"scanned_on": value})
    assert_problem(response, 422, "body.scanned_on")


def test_scans_of_unknown_cluster_are_404(client):
    assert_problem(client.get("/kubeclusters/ghost/scans"), 404)
    assert_problem(client.post("/kubeclusters/ghost/scans", json={}), 404)


def test_scan_of_another_cluster_is_404_under_this_one(client, inventory):
    cluster, other = inventory.cluster(), inventory.cluster()
    scan = inventory.scan(other["name"], 5)
    assert_problem(client.get(f"/kubeclusters/{cluster['name']}/scans/{scan['id']}"), 404)


@pytest.mark.parametrize("ahead", [SCANNED_ON_AHEAD_SECONDS + 60, 10 * 365 * 86400, None])
def test_a_scan_from_past_the_clocks_skew_is_422_and_changes_nothing(client, inventory, ahead):
    """One agent with a bad clock cannot pin its cluster: a scan more than
    the documented skew ahead of the service's clock is refused at
    `body.scanned_on`, stores nothing, and the next real scan counts."""
    cluster = inventory.cluster()
    path = f"/kubeclusters/{cluster['name']}/scans"
    before = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    scanned_on = MAX_SCANNED_ON if ahead is None else int(time.time()) + ahead
    body = {"scanned_on": scanned_on, "server": {"git_version": "v1.31.2"}}
    problem = assert_problem(client.post(path, json=body), 422, "body.scanned_on")
    assert f"{SCANNED_ON_AHEAD_SECONDS // 60} minutes ahead" in problem["errors"][0]["message"]
    assert client.get(path).get_json()["results"] == []
    assert client.get(f"/kubeclusters/{cluster['name']}").get_json() == before
    real = client.post(path, json={"server": {"git_version": "v1.31.3"}})
    assert real.status_code == 201
    after = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    assert after["last_scanned_on"] == real.get_json()["scanned_on"]
    assert after["observed"]["scan"] == real.get_json()["id"]


def test_a_scan_within_the_clocks_skew_is_taken(client, inventory):
    cluster = inventory.cluster()
    scanned_on = int(time.time()) + SCANNED_ON_AHEAD_SECONDS - 30  # a fast clock, within it
    response = client.post(f"/kubeclusters/{cluster['name']}/scans",
                           json={"scanned_on": scanned_on})
    assert response.status_code == 201 and response.get_json()["scanned_on"] == scanned_on
