"""`order_by` on every list: the grammar and its errors, tokens bound to the
order, and walks that return every record exactly once in the order a sort
done here gives, with ties, missing values and versions of every shape."""
import random
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.core.versions import version_parts
from inventory.resources.clusters.spec import SPEC as CLUSTERS
from inventory.resources.organizations.spec import SPEC as ORGANIZATIONS
from inventory.resources.platforms.spec import SPEC as PLATFORMS
from inventory.resources.scans.spec import SPEC as SCANS
from inventory.resources.tokens.spec import SPEC as TOKENS
from tests.conftest import Inventory, assert_problem, walk
from tests.support.ordering import expected

LISTS = {  # path -> (declared orderings, the key field)
    "/organizations": (ORGANIZATIONS.orderings, "id"),
    "/kubeplatforms": (PLATFORMS.orderings, "name"),
    "/kubeclusters": (CLUSTERS.orderings, "name"),
    "/tokens": (TOKENS.orderings, "id"),
}
VERSIONS = ["1.9", "1.29", "1.31", "1.31.2", "v1.31.2-eks-1234", "1.29.3+k3s1", "v1.9.0",
            "1.10.1", "2.0"]


def every_order(orderings):
    """Each declared ordering and its reverse, as `order_by` text."""
    return [text for o in orderings.declared for text in (o.text, o.reversed().text)]


@pytest.fixture
def estate(app, client, inventory, store):
    """Records with ties, missing values and every shape of version, in an
    order unlike any sort's: two organizations, platforms and clusters of
    both, scans of some clusters, tokens."""
    rng = random.Random(7)
    orgs = [inventory.org(title=title) for title in ("Beta", "alpha", "Beta", "Zed", "é")]
    platforms = []
    for i in range(12):
        platforms.append(inventory.platform(
            org=orgs[i % 2]["id"], name=f"p-{rng.randrange(1000):03d}-{i}",
            title=rng.choice(["", "Core", "core", "Édge"]),
            control_plane={"provider": rng.choice(["eks", "aks", "gke"])},
            infrastructure={"cloud": {"provider": rng.choice(["aws", "azure"])}}))
    clusters = []
    for i in range(30):
        cluster = inventory.cluster(
            platform=platforms[i % len(platforms)]["name"], name=f"c-{rng.randrange(1000):03d}-{i}",
            environment=rng.choice(["production", "staging", "dev", "dev-2"]),
            version=rng.choice(VERSIONS))
        clusters.append(cluster)
        if i % 3:  # a third never scanned: missing last_scanned_on
            inventory.scan(cluster["name"], 1_700_000_000 + rng.randrange(5) * 3600)
    for cluster in clusters[::4]:  # changes move last_modified_on
        assert client.patch(f"/kubeclusters/{cluster['name']}",
                            json={"title": "changed"}).status_code == 200
    for i in range(6):
        body = {"name": rng.choice(["ci", "bot", "Bot"]), "role": "reader"}
        if i % 2:
            body["organization"] = orgs[0]["id"]
        assert client.post("/tokens", json=body).status_code == 201
    return orgs


@pytest.mark.parametrize("path", sorted(LISTS))
@pytest.mark.parametrize("limit", [1, 3, 100])
def test_every_ordering_walks_every_record_once_in_its_order(client, estate, path, limit):
    orderings, key_field = LISTS[path]
    everything = walk(client, path, limit=100)[0]
    for order_by in every_order(orderings):
        records, _ = walk(client, path, limit=limit, order_by=order_by)
        assert [r[key_field] for r in records] == \
            [r[key_field] for r in expected(everything, order_by, key_field)], order_by


def test_versions_sort_as_versions_and_missing_scans_come_first(client, estate):
    records, _ = walk(client, "/kubeclusters", limit=100, order_by="version")
    parts = [version_parts(r["version"]) for r in records]
    assert parts == sorted(parts) and parts[0] < version_parts("1.10")  # 1.9 before 1.10
    scanned, _ = walk(client, "/kubeclusters", limit=7, order_by="last_scanned_on")
    missing = [r["last_scanned_on"] is None for r in scanned]
    assert missing == sorted(missing, reverse=True) and any(missing) and not all(missing)
    newest, _ = walk(client, "/kubeclusters", limit=7, order_by="last_scanned_on desc")
    assert [r["name"] for r in newest] == [r["name"] for r in scanned][::-1]


def test_scans_in_both_directions(client, inventory):
    cluster = inventory.cluster()["name"]
    for scanned_on in (5, 3, 9, 3, 1):
        inventory.scan(cluster, scanned_on)
    oldest, _ = walk(client, f"/kubeclusters/{cluster}/scans", limit=2, order_by="scanned_on")
    newest, _ = walk(client, f"/kubeclusters/{cluster}/scans", limit=2,
                     order_by="scanned_on desc")
    assert [s["scanned_on"] for s in oldest] == [1, 3, 3, 5, 9]
    assert [s["id"] for s in newest] == [s["id"] for s in oldest][::-1]


def test_a_scoped_caller_walks_its_organization_in_order(app, client, estate):
    from tests.conftest import client_with
    made = client.post("/tokens", json={"name": "scoped", "role": "reader",
                                        "organization": estate[1]["id"]}).get_json()
    scoped = client_with(app, made["token"])
    mine, _ = walk(scoped, "/kubeclusters", limit=3, order_by="environment, version desc")
    everything = walk(client, "/kubeclusters", limit=100)[0]
    ours = [r for r in everything if r["organization"] == estate[1]["id"]]
    assert ours and [r["name"] for r in mine] == \
        [r["name"] for r in expected(ours, "environment, version desc", "name")]


@pytest.mark.parametrize("path, order_by, says", [
    ("/kubeclusters", "colour", "cannot be ordered by `colour`"),
    ("/kubeclusters", "labels", "cannot be ordered by `labels`"),
    ("/kubeclusters", "name, name", "more than once"),
    ("/kubeclusters", "version descending", "only by `desc`"),
    ("/kubeclusters", "version desc asc", "only by `desc`"),
    ("/kubeclusters", "version,", "empty entry"),
    ("/kubeclusters", ",", "empty entry"),
    ("/kubeclusters", "version, environment", "does not serve"),
    ("/kubeclusters", "version desc, environment", "does not serve"),
    ("/organizations", "name", "cannot be ordered by `name`"),
    ("/kubeplatforms", "control_plane", "cannot be ordered by `control_plane`"),
    ("/tokens", "role", "cannot be ordered by `role`"),
    ("/kubeclusters/c/scans", "id", "cannot be ordered by `id`"),
    ("/kubeclusters", "v" * 201, None),
    ("/kubeclusters", "version\tdesc", "Only field names"),
    ("/kubeclusters", "version\u00a0desc", "Only field names"),
    ("/kubeclusters", "version\ndesc", "Only field names"),
])
def test_what_a_list_does_not_serve_is_a_422_naming_what_it_does(client, inventory, path,
                                                                  order_by, says):
    inventory.cluster(name="c")
    body = assert_problem(client.get(path, query_string={"order_by": order_by}), 422,
                          "query.order_by")
    message = body["errors"][0]["message"]
    if says:
        assert says in message
        fields = SCANS.orderings.fields if "scans" in path else LISTS[path][0].fields
        assert all(f"`{name}`" in message for name in fields)


@pytest.mark.parametrize("first, then", [
    ({"order_by": "version"}, {}),
    ({"order_by": "version"}, {"order_by": "version desc"}),
    ({"order_by": "version"}, {"order_by": "environment, version"}),
    ({}, {"order_by": "name"}),
    ({"order_by": "version", "filter": 'environment="dev"'}, {"order_by": "version"}),
])
def test_a_token_is_bound_to_its_order(client, inventory, first, then):
    for version in VERSIONS[:3]:
        inventory.cluster(version=version, environment="dev")
    token = client.get("/kubeclusters", query_string={"limit": 1, **first}
                       ).get_json()["pagination"]["continue"]
    assert token
    assert_problem(client.get("/kubeclusters", query_string={**then, "continue": token}),
                   422, "query.continue")


def test_the_same_order_written_differently_keeps_its_token(client, inventory):
    for version in VERSIONS[:3]:
        inventory.cluster(version=version)
    token = client.get("/kubeclusters", query_string={"limit": 1, "order_by": "version asc"}
                       ).get_json()["pagination"]["continue"]
    page = client.get("/kubeclusters", query_string={
        "limit": 1, "order_by": "  version ", "continue": token})
    assert page.status_code == 200


def test_a_change_moves_a_record_and_its_order_keys_follow(client, inventory, store):
    for name, version in (("a", "1.29"), ("b", "1.30"), ("c", "1.31")):
        inventory.cluster(name=name, version=version)
    client.patch("/kubeclusters/a", json={"version": "1.32"})
    inventory.scan("b", 5)
    names = [r["name"] for r in walk(client, "/kubeclusters", order_by="version")[0]]
    assert names == ["b", "c", "a"]
    # b alone was scanned: last ascending (missing values first), first descending
    names = [r["name"] for r in walk(client, "/kubeclusters", order_by="last_scanned_on")[0]]
    assert names == ["a", "c", "b"]
    names = [r["name"] for r in walk(client, "/kubeclusters", order_by="last_scanned_on desc")[0]]
    assert names == ["b", "c", "a"]


def test_records_written_before_an_ordering_get_their_order_keys(client, inventory, store):
    for name, version in (("a", "1.31"), ("b", "1.9"), ("c", "1.30")):
        inventory.cluster(name=name, version=version)
    fields = [field for _, field in store.clusters.kept_orderings()]
    store.db.clusters.update_many({}, {"$unset": {field: "" for field in fields}})
    store.create_indexes()
    names = [r["name"] for r in walk(client, "/kubeclusters", order_by="version")[0]]
    assert names == ["b", "c", "a"]
    assert all(field in doc for doc in store.db.clusters.find({}) for field in fields)


# -- properties over random data, orders, filters and limits ---------------

FILTERS = [None, 'environment="dev"', 'version<"1.30"', "NOT labels:team",
           'environment="prod*" OR version>="1.31"', "last_scanned_on>1700003600"]


@pytest.mark.slow
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_walk_is_the_filtered_sorted_list_exactly_once(app, client, data):
    inventory = Inventory(client)
    run = uuid.uuid4().hex[:8]  # the app outlives one example: names unique to this one
    org = inventory.org()["id"]
    platform = inventory.platform(org=org, name=f"p-{run}")["name"]
    for i in range(data.draw(st.integers(0, 14), label="clusters")):
        cluster = inventory.cluster(
            platform=platform, name=f"c-{run}-{i}",
            environment=data.draw(st.sampled_from(["dev", "production", "prod-2"])),
            version=data.draw(st.sampled_from(VERSIONS)),
            labels=data.draw(st.sampled_from([{}, {"team": "a"}])))
        for _ in range(data.draw(st.integers(0, 2))):
            inventory.scan(cluster["name"], 1_700_000_000 + data.draw(st.integers(0, 3)) * 3600)
    order_by = data.draw(st.sampled_from(every_order(CLUSTERS.orderings)), label="order_by")
    extra = data.draw(st.sampled_from(FILTERS), label="filter")
    scope = f'organization="{org}"'
    filter_text = f"{scope} AND ({extra})" if extra else scope
    limit = data.draw(st.integers(1, 6), label="limit")
    walked, _ = walk(client, "/kubeclusters", limit=limit, order_by=order_by,
                     filter=filter_text)
    matching, _ = walk(client, "/kubeclusters", limit=100, filter=filter_text)
    assert [r["name"] for r in walked] == \
        [r["name"] for r in expected(matching, order_by, "name")]


def test_the_longest_sort_values_still_make_tokens_a_list_accepts(client, inventory):
    # 200 characters of 4 bytes each: the longest title, the longest order key
    for start in (0x1F600, 0x10000, 0x100000):
        inventory.org(title="".join(chr(start + i) for i in range(200)))
    for order_by in ("title", "title desc"):
        records, pages = walk(client, "/organizations", limit=1, order_by=order_by)
        assert len(records) == 3 and pages == 3
