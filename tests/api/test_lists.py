import random

import pytest

from tests.conftest import assert_problem, walk

LISTS = ["/organizations", "/kubeplatforms", "/kubeclusters"]


@pytest.fixture
def orgs(inventory):
    return [inventory.org(title=f"Org {i}")["id"] for i in range(25)]


@pytest.mark.parametrize("path", LISTS)
def test_list_envelope_has_results_pagination_and_schema(client, path):
    body = client.get(path).get_json()
    assert set(body) == {"$schema", "results", "pagination"}
    assert body["pagination"] == {"continue": ""}
    assert body["$schema"].startswith("http://localhost/schemas/")


@pytest.mark.parametrize("limit, size", [(None, 20), ("0", 20), ("1", 1), ("20", 20), ("100", 25)])
def test_limit_absent_or_0_means_20(client, orgs, limit, size):
    query = {} if limit is None else {"limit": limit}
    assert len(client.get("/organizations", query_string=query).get_json()["results"]) == size


@pytest.mark.parametrize("limit", ["101", "-1", "abc", "1.5", "", "1e2"])
def test_list_with_limit_out_of_range_or_not_integer_is_422(client, limit):
    body = assert_problem(client.get("/organizations", query_string={"limit": limit}), 422,
                          "query.limit")
    assert body["errors"][0]["value"] == limit


def test_unknown_query_parameter_is_422(client):
    assert_problem(client.get("/organizations?limt=5"), 422, "query.limt")


@pytest.mark.parametrize("limit", [1, 2, 7, 24, 25, 26, 100])
def test_walk_returns_every_record_once_and_ends_without_an_empty_page(client, orgs, limit):
    records, pages = walk(client, "/organizations", limit=limit)
    assert [r["id"] for r in records] == orgs
    assert pages == -(-len(orgs) // limit)


def test_last_full_page_says_empty_continue(client, orgs):
    body = client.get("/organizations", query_string={"limit": 25}).get_json()
    assert len(body["results"]) == 25 and body["pagination"]["continue"] == ""


def test_walk_while_others_create_and_delete_sees_survivors_exactly_once(client, inventory):
    rng = random.Random(7)
    names = [inventory.platform(name=f"p{i:03d}")["name"] for i in range(60)]
    org = client.get(f"/kubeplatforms/{names[0]}").get_json()["organization"]
    deleted, seen, token = set(), [], None
    while True:
        query = {"limit": 7, **({"continue": token} if token else {})}
        body = client.get("/kubeplatforms", query_string=query).get_json()
        seen += [p["name"] for p in body["results"]]
        # between pages: delete a few (seen or not), create a few anywhere in key order
        for name in rng.sample([n for n in names if n not in deleted], 3):
            assert client.delete(f"/kubeplatforms/{name}").status_code == 204
            deleted.add(name)
        for _ in range(3):
            inventory.platform(org=org, name=f"p{rng.randrange(1000):03d}x{len(seen)}-{_}")
        token = body["pagination"]["continue"]
        if not token:
            break
    survivors = [n for n in names if n not in deleted]
    assert len(seen) == len(set(seen)), "a record came twice"
    assert set(survivors) <= set(seen), "a record that lived through the walk was missed"
    assert seen == sorted(seen)


@pytest.mark.parametrize("token", ["garbage", "x" * 300, "eyJhIjoxfQ.bad-signature"])
def test_bad_continue_token_is_422(client, orgs, token):
    body = assert_problem(client.get("/organizations", query_string={"continue": token}), 422,
                          "query.continue")
    assert body["errors"][0]["value"] == token


def test_tampered_continue_token_is_422(client, orgs):
    token = client.get("/organizations?limit=2").get_json()["pagination"]["continue"]
    tampered = token[:5] + ("A" if token[5] != "A" else "B") + token[6:]
    assert_problem(client.get("/organizations", query_string={"continue": tampered}), 422,
                   "query.continue")


def test_token_of_another_list_is_422(client, inventory):
    for _ in range(3):
        inventory.platform()
    token = client.get("/kubeplatforms?limit=1").get_json()["pagination"]["continue"]
    assert_problem(client.get("/kubeclusters", query_string={"continue": token}), 422,
                   "query.continue")


def test_token_of_another_clusters_scans_is_422(client, inventory):
    first, second = inventory.cluster(), inventory.cluster()
    for t in (1, 2):
        inventory.scan(first["name"], t)
    token = client.get(f"/kubeclusters/{first['name']}/scans?limit=1").get_json()["pagination"]["continue"]
    assert_problem(client.get(f"/kubeclusters/{second['name']}/scans",
                              query_string={"continue": token}), 422, "query.continue")
    # the same cluster addressed by its id accepts it
    assert client.get(f"/kubeclusters/{first['id']}/scans",
                      query_string={"continue": token}).status_code == 200


def test_token_is_bound_to_its_filter(client, inventory):
    org = inventory.org()["id"]
    for _ in range(3):
        inventory.platform(org=org)
    flt = f'organization="{org}"'
    token = client.get("/kubeplatforms", query_string={"limit": 1, "filter": flt}).get_json()[
        "pagination"]["continue"]
    assert client.get("/kubeplatforms", query_string={"continue": token, "filter": flt}
                      ).status_code == 200
    assert_problem(client.get("/kubeplatforms", query_string={"continue": token}), 422,
                   "query.continue")


def test_filter_by_organization_pages_only_its_platforms(client, inventory):
    mine, theirs = inventory.org()["id"], inventory.org()["id"]
    wanted = sorted(inventory.platform(org=mine)["name"] for _ in range(5))
    for _ in range(5):
        inventory.platform(org=theirs)
    records, _ = walk(client, "/kubeplatforms", limit=2, filter=f'organization="{mine}"')
    assert [p["name"] for p in records] == wanted


def test_filter_by_platform_lists_its_clusters(client, inventory):
    platform = inventory.platform()["name"]
    wanted = sorted(inventory.cluster(platform=platform)["name"] for _ in range(3))
    inventory.cluster()
    records, _ = walk(client, "/kubeclusters", filter=f'platform="{platform}"')
    assert [c["name"] for c in records] == wanted


def test_results_carry_no_schema_of_their_own(client, orgs):
    body = client.get("/organizations?limit=2").get_json()
    assert all("$schema" not in r for r in body["results"])
