"""Quotas per organization (inventory/store/quotas.py): through HTTP, and
parallel creates against a served app, counting overshoot."""
import pytest

from inventory.store.quotas import LEASE
from tests.conftest import ADMIN_TOKEN, assert_problem, client_with
from tests.support.races import ROUNDS, Anomalies, run_together

PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}


def test_an_organization_shows_its_quotas_with_the_documented_defaults(client, config):
    org = client.post("/organizations", json={"title": "Acme"}).get_json()
    assert org["quotas"] == {"platforms": config.QUOTA_PLATFORMS,
                             "clusters": config.QUOTA_CLUSTERS, "tokens": config.QUOTA_TOKENS,
                             "webhooks": config.QUOTA_WEBHOOKS,
                             "rollouts": config.QUOTA_ROLLOUTS}
    assert (config.QUOTA_PLATFORMS, config.QUOTA_CLUSTERS, config.QUOTA_TOKENS,
            config.QUOTA_WEBHOOKS, config.QUOTA_ROLLOUTS) == (100, 1000, 100, 20, 20)


def test_a_create_past_a_quota_is_403_naming_it_and_stores_nothing(client, inventory):
    org = client.post("/organizations", json={"title": "Acme", "quotas": {"clusters": 2}}).get_json()
    assert org["quotas"]["clusters"] == 2
    platform = inventory.platform(org=org["id"])["name"]
    inventory.cluster(platform=platform, name="one")
    inventory.cluster(platform=platform, name="two")
    response = client.post("/kubeclusters", json={"name": "three", "platform": platform,
                                                  "environment": "dev", "version": "1.30"})
    body = assert_problem(response, 403)
    assert body["detail"] == "exceeded quota: clusters, used: 2, limited: 2"
    assert client.get("/kubeclusters/three").status_code == 404
    assert client.delete("/kubeclusters/one").status_code == 204  # a delete frees its place
    assert client.post("/kubeclusters", json={"name": "three", "platform": platform,
                                              "environment": "dev",
                                              "version": "1.30"}).status_code == 201


def test_platform_and_token_quotas(client):
    org = client.post("/organizations", json={
        "title": "Acme", "quotas": {"platforms": 1, "tokens": 1}}).get_json()["id"]
    assert client.post("/kubeplatforms", json={"name": "p1", "organization": org,
                                               **PLATFORM}).status_code == 201
    body = assert_problem(client.post("/kubeplatforms", json={"name": "p2", "organization": org,
                                                              **PLATFORM}), 403)
    assert body["detail"] == "exceeded quota: platforms, used: 1, limited: 1"
    assert client.post("/tokens", json={"name": "t1", "role": "reader",
                                        "organization": org}).status_code == 201
    body = assert_problem(client.post("/tokens", json={"name": "t2", "role": "reader",
                                                       "organization": org}), 403)
    assert body["detail"] == "exceeded quota: tokens, used: 1, limited: 1"
    # unscoped tokens belong to no organization and count against none
    assert client.post("/tokens", json={"name": "ops", "role": "reader"}).status_code == 201


def test_a_forced_delete_frees_everything_below_it(client, inventory):
    org = client.post("/organizations", json={"title": "Acme", "quotas": {
        "platforms": 1, "clusters": 3}}).get_json()["id"]
    platform = inventory.platform(org=org)["name"]
    for name in ("a", "b", "c"):
        inventory.cluster(platform=platform, name=name)
    assert client.delete(f"/kubeplatforms/{platform}?force=true").status_code == 204
    platform = inventory.platform(org=org)["name"]
    for name in ("a", "b", "c"):
        inventory.cluster(platform=platform, name=name)


def test_a_refused_create_does_not_count(client, inventory):
    org = client.post("/organizations", json={"title": "Acme",
                                              "quotas": {"clusters": 1}}).get_json()["id"]
    platform = inventory.platform(org=org)["name"]
    inventory.cluster(name="taken")  # in another organization
    response = client.post("/kubeclusters", json={"name": "taken", "platform": platform,
                                                  "environment": "dev", "version": "1.30"})
    assert response.status_code == 409
    inventory.cluster(platform=platform, name="mine")


def test_members_read_quotas_and_only_unscoped_admins_set_them(app, client):
    org = client.post("/organizations", json={"title": "Acme"}).get_json()["id"]

    def token(role, organization=org):
        made = client.post("/tokens", json={"name": role, "role": role,
                                             "organization": organization}).get_json()
        return client_with(app, made["token"])
    assert token("reader").get(f"/organizations/{org}").get_json()["quotas"]["clusters"] == 1000
    scoped_admin = token("admin")
    assert_problem(scoped_admin.patch(f"/organizations/{org}", json={"quotas": {"clusters": 5000}}),
                   403)
    assert scoped_admin.patch(f"/organizations/{org}",
                              json={"title": "Acme Corp"}).status_code == 200
    response = client.patch(f"/organizations/{org}", json={"quotas": {"clusters": 5}})
    assert response.status_code == 200
    assert response.get_json()["quotas"] == {"platforms": 100, "clusters": 5, "tokens": 100,
                                                "webhooks": 20, "rollouts": 20}
    assert client.get(f"/organizations/{org}").get_json()["quotas"]["clusters"] == 5


@pytest.mark.parametrize("quotas", [{"clusters": -1}, {"clusters": "5"}, {"clusters": 1.5},
                                    {"clusters": 10_000_001}, {"nodes": 5}])
def test_bad_quotas_are_422(client, quotas):
    assert_problem(client.post("/organizations", json={"title": "Acme", "quotas": quotas}), 422)


def test_a_reservation_whose_create_died_is_healed_after_its_lease(client, inventory, store):
    org = client.post("/organizations", json={"title": "Acme",
                                              "quotas": {"clusters": 1}}).get_json()["id"]
    platform = inventory.platform(org=org)["name"]
    # a create that reserved its place and died before inserting
    quotas = store.clusters.quotas
    assert quotas.reserve(org, "clusters", "k8scl_dead", {"_id": "ghost", "id": "k8scl_dead"})
    body = {"name": "alive", "platform": platform, "environment": "dev", "version": "1.30"}
    assert_problem(client.post("/kubeclusters", json=body), 403)  # within its lease
    store.db.organizations.update_one(
        {"_id": org}, {"$set": {"_reserving.clusters.k8scl_dead.at": _long_ago()}})
    assert client.post("/kubeclusters", json=body).status_code == 201


def test_a_create_that_outlived_its_lease_undoes_itself(client, inventory, store, monkeypatch):
    org = client.post("/organizations", json={"title": "Acme",
                                              "quotas": {"clusters": 1}}).get_json()["id"]
    platform = inventory.platform(org=org)["name"]
    original = store.clusters.insert

    def insert_after_being_healed(doc, **options):
        # while this request stalled, its reservation was given back
        store.db.organizations.update_one(
            {"_id": org}, {"$unset": {f"_reserving.clusters.{doc['id']}": ""},
                           "$inc": {"_used.clusters": -1}})
        original(doc, **options)
    monkeypatch.setattr(store.clusters, "insert", insert_after_being_healed)
    response = client.post("/kubeclusters", json={"name": "late", "platform": platform,
                                                  "environment": "dev", "version": "1.30"})
    assert_problem(response, 409)
    assert client.get("/kubeclusters/late").status_code == 404


def _written_before_quotas(store, org):
    """The organization as a release that did not count left it: no counts,
    no mark (and a delete by the counting release may have made one negative)."""
    store.db.organizations.update_one({"_id": org}, {"$unset": {"_used": "", "_counted": ""}})


def test_a_new_organization_is_counted_from_birth(client, store):
    org = client.post("/organizations", json={"title": "Acme"}).get_json()["id"]
    doc = store.db.organizations.find_one({"_id": org})
    assert doc["_counted"] is True and doc["_used"] == {"platforms": 0, "clusters": 0, "tokens": 0,
                                                            "webhooks": 0, "rollouts": 0}
    assert store.clusters.quotas.count_uncounted() == 0


def test_organizations_written_before_quotas_are_recounted_at_release(client, inventory, store):
    org = client.post("/organizations", json={"title": "Old", "quotas": {"clusters": 3}}
                      ).get_json()["id"]
    platform = inventory.platform(org=org)["name"]
    for name in ("a", "b", "c"):
        inventory.cluster(platform=platform, name=name)
    assert client.post("/tokens", json={"name": "t", "role": "reader",
                                        "organization": org}).status_code == 201
    _written_before_quotas(store, org)
    assert client.delete("/kubeclusters/c").status_code == 204  # counted -1 from nothing
    assert store.db.organizations.find_one({"_id": org})["_used"] == {"clusters": -1}
    store.create_indexes()  # the release step
    doc = store.db.organizations.find_one({"_id": org})
    assert doc["_used"] == {"platforms": 1, "clusters": 2, "tokens": 1, "webhooks": 0,
                            "rollouts": 0} \
        and doc["_counted"]
    body = {"platform": platform, "environment": "dev", "version": "1.30"}
    assert client.post("/kubeclusters", json={"name": "c2", **body}).status_code == 201
    assert_problem(client.post("/kubeclusters", json={"name": "d", **body}), 403)
    assert store.clusters.quotas.count_uncounted() == 0  # once


def test_a_recount_raced_by_a_create_starts_again(client, inventory, store, monkeypatch):
    org = client.post("/organizations", json={"title": "Old"}).get_json()["id"]
    platform = inventory.platform(org=org)["name"]
    inventory.cluster(platform=platform, name="a")
    _written_before_quotas(store, org)
    quotas, raced = store.clusters.quotas, []

    class CountedWhileACreateLands:
        def __init__(self, collection):
            self.collection = collection

        def __getattr__(self, name):
            return getattr(self.collection, name)

        def count_documents(self, query):
            counted = self.collection.count_documents(query)
            if not raced:  # a create reserves and inserts meanwhile
                raced.append(inventory.cluster(platform=platform, name="b"))
            return counted
    monkeypatch.setitem(quotas.children, "clusters",
                        CountedWhileACreateLands(quotas.children["clusters"]))
    assert quotas.recount(org) is True and raced
    assert store.db.organizations.find_one({"_id": org})["_used"]["clusters"] == 2


def test_a_recount_counts_a_reservation_whose_child_is_not_in_yet(client, inventory, store):
    org = client.post("/organizations", json={"title": "Old"}).get_json()["id"]
    platform = inventory.platform(org=org)["name"]
    inventory.cluster(platform=platform, name="a")
    _written_before_quotas(store, org)
    quotas = store.clusters.quotas
    assert quotas.reserve(org, "clusters", "k8scl_x", {"_id": "coming", "id": "k8scl_x"})
    store.db.organizations.update_one({"_id": org}, {"$unset": {"_counted": ""}})
    assert quotas.recount(org) is True
    assert store.db.organizations.find_one({"_id": org})["_used"]["clusters"] == 2


def _long_ago():
    from datetime import datetime, timezone
    return datetime.now(timezone.utc).replace(tzinfo=None) - 2 * LEASE  # naive UTC, as stored


@pytest.mark.slow
def test_parallel_creates_never_overshoot_a_quota(served, store):
    """Each round: an organization whose quota has a few places left, more
    parallel creates than places (clusters, platforms, tokens, and deletes
    freeing places meanwhile); afterwards no more records than the quota,
    and the count kept equal to the records held."""
    anomalies, requests = Anomalies("quota creates"), 0
    for round_ in range(ROUNDS):
        org = served("POST", "/organizations", {"title": f"Q{round_}", "quotas": {
            "platforms": 3, "clusters": 4, "tokens": 2}}).body["id"]
        served("POST", "/kubeplatforms", {"name": f"q{round_}", "organization": org, **PLATFORM})
        served("POST", "/kubeclusters", {"name": f"q{round_}-old", "platform": f"q{round_}",
                                         "environment": "dev", "version": "1.30"})
        calls = [lambda n=n, r=round_: served("POST", "/kubeclusters", {
            "name": f"q{r}-{n}", "platform": f"q{r}", "environment": "dev",
            "version": "1.30"}) for n in range(6)]
        calls += [lambda n=n, r=round_, o=org: served("POST", "/kubeplatforms", {
            "name": f"q{r}-p{n}", "organization": o, **PLATFORM}) for n in range(4)]
        calls += [lambda n=n, o=org: served("POST", "/tokens", {
            "name": f"t{n}", "role": "reader", "organization": o}) for n in range(4)]
        calls.append(lambda r=round_: served("DELETE", f"/kubeclusters/q{r}-old"))
        answers = run_together(calls)
        requests += len(calls)
        statuses = [answer.status for answer in answers]
        anomalies.check("unexpected status", [s for s in statuses if s not in (201, 204, 403)])
        held = {kind: _held(served, kind, org) for kind in ("clusters", "platforms", "tokens")}
        anomalies.check("overshoot", {kind: n for kind, n in held.items()
                                      if n > {"clusters": 4, "platforms": 3, "tokens": 2}[kind]})
        # held records, their places counted on the organization: equal once
        # no request is running (a leak would refuse creates early, an
        # undercount let them overshoot later)
        counted = store.db.organizations.find_one({"_id": org})["_used"]
        anomalies.check("count differs from records held", {
            kind: (counted.get(kind, 0), n) for kind, n in held.items()
            if counted.get(kind, 0) != n})
        reserving = store.db.organizations.find_one({"_id": org}).get("_reserving") or {}
        anomalies.check("reservations left", {k: v for k, v in reserving.items() if v})
    anomalies.assert_none(ROUNDS, requests)


def _held(served, kind, org):
    path = {"clusters": "/kubeclusters", "platforms": "/kubeplatforms", "tokens": "/tokens"}[kind]
    query = f'filter=organization=%22{org}%22&limit=100'
    return len(served("GET", f"{path}?{query}", token=ADMIN_TOKEN).body["results"])


def test_the_quota_kinds_are_those_the_specs_declare():
    """A resource counts against a quota by declaring `quota_kind`; its
    default (core.caps, read by Config as QUOTA_<KIND>) and the
    organization's `quotas` object must name exactly those kinds."""
    from inventory.core.caps import DEFAULT_QUOTAS
    from inventory.resources import SPECS
    from schemas.organizations import QuotasChangeSchema, QuotasSchema

    declared = {spec.quota_kind for spec in SPECS if spec.quota_kind}
    assert set(DEFAULT_QUOTAS) == declared
    assert set(QuotasSchema().fields) == declared
    assert set(QuotasChangeSchema().fields) == declared
