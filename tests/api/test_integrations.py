"""Argo CD's plugin generator and Prometheus' HTTP service discovery: their
exact shapes, scope, filters, and failures that are never an empty list."""
import pytest

from inventory.core import caps
from inventory.core.errors import Unavailable
from tests.conftest import assert_problem, client_with

GETPARAMS = "/integrations/argocd/api/v1/getparams.execute"
TARGETS = "/integrations/prometheus/targets"


def argocd_body(**parameters):
    # what Argo CD's plugin generator posts (applicationset/services/plugin/plugin_service.go)
    return {"applicationSetName": "fleet", "input": {"parameters": parameters}}


@pytest.fixture
def fleet(inventory):
    platform = inventory.platform()
    clusters = [
        inventory.cluster(platform=platform["name"], name="b-prod", environment="production",
                          version="v1.31.2-eks-1234", labels={"team": "core", "tier-1": "yes"},
                          endpoint="https://b.example.com"),
        inventory.cluster(platform=platform["name"], name="a-dev", environment="dev",
                          version="1.29.4", endpoint="https://[2001:db8::1]:6443/k8s"),
        inventory.cluster(platform=platform["name"], name="c-none", environment="dev",
                          version="1.30.1"),
    ]
    return {cluster["name"]: cluster for cluster in clusters}


def test_argocd_gets_one_parameter_set_per_cluster_in_name_order(client, fleet):
    response = client.post(GETPARAMS, json=argocd_body(unrelated={"any": ["json"]}))
    assert response.status_code == 200
    params = response.get_json()["output"]["parameters"]
    assert [p["name"] for p in params] == ["a-dev", "b-prod", "c-none"]
    b = params[1]
    assert b == {"name": "b-prod", "id": fleet["b-prod"]["id"],
                 "organization": fleet["b-prod"]["organization"],
                 "platform": fleet["b-prod"]["platform"], "environment": "production",
                 "version": "v1.31.2-eks-1234", "minor": "1.31",
                 "support_status": fleet["b-prod"]["support"]["status"],
                 "labels": {"team": "core", "tier-1": "yes"}, "server": "https://b.example.com"}
    assert params[2]["server"] is None  # without an endpoint: listed, server null


def test_argocd_filter_selects_clusters(client, fleet):
    response = client.post(GETPARAMS, json=argocd_body(filter='environment="dev"'))
    assert [p["name"] for p in response.get_json()["output"]["parameters"]] == \
        ["a-dev", "c-none"]
    nothing = client.post(GETPARAMS, json=argocd_body(filter='environment="nope"'))
    assert nothing.status_code == 200 and nothing.get_json() == {"output": {"parameters": []}}


def test_argocd_without_parameters_lists_every_cluster(client, fleet):
    # Argo CD's Go client sends a nil parameters map as null
    body = {"applicationSetName": "fleet", "input": {"parameters": None}}
    params = client.post(GETPARAMS, json=body).get_json()["output"]["parameters"]
    assert len(params) == 3


@pytest.mark.parametrize("body", [None, {}, {"applicationSetName": "fleet"},
                                  {"input": {"parameters": {}}}, [], "x"])
def test_argocd_refuses_a_body_that_is_not_argo_cds(client, fleet, body):
    response = client.post(GETPARAMS, json=body) if body is not None else client.post(GETPARAMS)
    assert response.status_code in (415, 422)
    assert response.mimetype == "application/problem+json"


@pytest.mark.parametrize("filter_value", ["environment=", 'nope="x"', 42, ["x"]])
def test_argocd_bad_filter_is_422_not_an_empty_list(client, fleet, filter_value):
    response = client.post(GETPARAMS, json=argocd_body(filter=filter_value))
    assert_problem(response, 422, "body.input.parameters.filter")


def test_argocd_sees_only_the_callers_organization(app, client, inventory, fleet):
    other = inventory.cluster(name="other-org", endpoint="https://o.example.com")
    secret = client.post("/tokens", json={"name": "argocd", "role": "reader",
                                          "organization": other["organization"]}
                         ).get_json()["token"]
    scoped = client_with(app, secret)
    params = scoped.post(GETPARAMS, json=argocd_body()).get_json()["output"]["parameters"]
    assert [p["name"] for p in params] == ["other-org"]
    groups = scoped.get(TARGETS).get_json()
    assert [g["labels"]["__meta_inventory_cluster"] for g in groups] == ["other-org"]


def test_argocd_without_a_token_is_401(anonymous, fleet):
    assert_problem(anonymous.post(GETPARAMS, json=argocd_body()), 401)


def test_more_clusters_than_the_maximum_is_an_error_not_a_truncated_list(
        client, fleet, monkeypatch):
    monkeypatch.setattr("inventory.integrations.clusters.MAX_INTEGRATION_CLUSTERS", 2)
    assert_problem(client.post(GETPARAMS, json=argocd_body()), 422,
                   "body.input.parameters.filter")
    monkeypatch.setattr("inventory.integrations.clusters.MAX_INTEGRATION_CLUSTERS", 1)
    assert_problem(client.get(TARGETS), 422, "query.filter")
    assert caps.MAX_INTEGRATION_CLUSTERS == 10_000  # the documented maximum


def test_prometheus_cap_counts_the_target_groups_not_the_clusters_without_endpoint(
        client, fleet, monkeypatch):
    # three clusters match, two have an endpoint: the answer has two groups
    monkeypatch.setattr("inventory.integrations.clusters.MAX_INTEGRATION_CLUSTERS", 2)
    groups = client.get(TARGETS).get_json()
    assert [g["labels"]["__meta_inventory_cluster"] for g in groups] == ["a-dev", "b-prod"]


def test_a_long_answer_lets_others_run_between_its_slices(client, fleet, monkeypatch):
    # every look at the clock finds the slice used up: each page read and
    # each slice shaped lets others run (how long it holds is bench/'s)
    turns = []
    monkeypatch.setattr("inventory.core.turns.SLICE_SECONDS", -1.0)
    monkeypatch.setattr("inventory.core.turns.let_others_run", lambda: turns.append(1))
    monkeypatch.setattr("inventory.integrations.clusters._PAGE", 1)
    monkeypatch.setattr("inventory.integrations.clusters._SLICE", 1)
    assert client.post(GETPARAMS, json=argocd_body()).status_code == 200
    assert len(turns) >= 2 + 3  # between the 3 pages, after each of the 3 slices
    turns.clear()
    assert len(client.get(TARGETS).get_json()) == 2
    assert len(turns) >= 2 + 2


def test_a_store_outage_is_503_not_an_empty_list(client, fleet, store, monkeypatch):
    def away(*args, **kwargs):
        raise Unavailable()
    monkeypatch.setattr(store.clusters, "list", away)
    assert_problem(client.post(GETPARAMS, json=argocd_body()), 503)
    assert_problem(client.get(TARGETS), 503)


def test_prometheus_gets_a_target_group_per_cluster_with_an_endpoint(client, fleet):
    response = client.get(TARGETS)
    assert response.status_code == 200 and response.mimetype == "application/json"
    groups = response.get_json()
    assert [g["targets"] for g in groups] == [["[2001:db8::1]:6443"], ["b.example.com:443"]]
    b = groups[1]["labels"]
    assert b == {"__meta_inventory_cluster": "b-prod",
                 "__meta_inventory_cluster_id": fleet["b-prod"]["id"],
                 "__meta_inventory_organization": fleet["b-prod"]["organization"],
                 "__meta_inventory_platform": fleet["b-prod"]["platform"],
                 "__meta_inventory_environment": "production",
                 "__meta_inventory_version": "v1.31.2-eks-1234",
                 "__meta_inventory_support_status": fleet["b-prod"]["support"]["status"],
                 "__meta_inventory_endpoint": "https://b.example.com",
                 "__meta_inventory_label_team": "core",
                 "__meta_inventory_label_tier_1": "yes"}


def test_prometheus_filter_and_empty_answer(client, fleet):
    assert [g["labels"]["__meta_inventory_cluster"] for g in
            client.get(TARGETS, query_string={"filter": 'environment="production"'}).get_json()
            ] == ["b-prod"]
    empty = client.get(TARGETS, query_string={"filter": 'environment="nope"'})
    assert empty.status_code == 200 and empty.get_json() == []
    assert_problem(client.get(TARGETS, query_string={"filter": "environment="}), 422,
                   "query.filter")


def test_prometheus_without_a_token_is_401(anonymous, fleet):
    assert_problem(anonymous.get(TARGETS), 401)
