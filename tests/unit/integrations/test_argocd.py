"""Argo CD's plugin generator (inventory/integrations/argocd.py): one
cluster as one parameter set (`parameters`, called directly: its minor,
its support status, its endpoint as `server`), and, through the generator
with Flask's test client (the view is HTTP glue), a rollout's parameter
that fails as a 422 at the parameter at fault: a rollout the caller cannot
see, a bad filter beside it. The
generator's answers at large: tests/api/test_integrations.py and
tests/api/test_rollouts.py."""
import pytest

from inventory.integrations.argocd import parameters
from tests.conftest import assert_problem, client_with

GETPARAMS = "/integrations/argocd/api/v1/getparams.execute"
CLUSTER = {"name": "c1", "id": "k8scl_1", "organization": "org_1", "platform": "p1",
           "environment": "production", "version": "v1.31.2-eks-1234",
           "support": {"status": "supported", "ends_on": "2026-12-01"},
           "labels": {"team": "core"}, "endpoint": "https://c1.example.com",
           "readiness": {"status": "passing"}}


def _generate(client, **given):
    return client.post(GETPARAMS, json={"applicationSetName": "upgrade",
                                        "input": {"parameters": given}})


def test_a_cluster_is_one_parameter_set():
    assert parameters(CLUSTER) == {
        "name": "c1", "id": "k8scl_1", "organization": "org_1", "platform": "p1",
        "environment": "production", "version": "v1.31.2-eks-1234", "minor": "1.31",
        "support_status": "supported", "labels": {"team": "core"},
        "server": "https://c1.example.com"}


def test_a_cluster_without_an_endpoint_has_no_server():
    assert parameters({**CLUSTER, "endpoint": None, "version": "1.29"})["server"] is None
    assert parameters({**CLUSTER, "version": "1.29"})["minor"] == "1.29"


@pytest.fixture
def rollout(client, inventory):
    """A rollout of one organization's clusters."""
    org = inventory.org()["id"]
    platform = inventory.platform(org=org)["name"]
    for name in ("c-1", "c-2"):
        inventory.cluster(platform=platform, name=name, version="1.31.2")
    response = client.post("/rollouts", json={"name": "wave", "target": "1.32",
                                              "organization": org,
                                              "stages": [{"name": "all", "filter": ""}]})
    assert response.status_code == 201, response.get_json()
    return org


def test_a_rollout_the_caller_cannot_see_is_a_422_at_the_rollout(app, client, inventory,
                                                                 rollout):
    assert_problem(_generate(client, rollout="nope"), 422, "body.input.parameters.rollout")
    other = inventory.org(title="Other")["id"]
    secret = client.post("/tokens", json={"name": "argocd", "role": "reader",
                                          "organization": other}).get_json()["token"]
    assert_problem(_generate(client_with(app, secret), rollout="wave"), 422,
                   "body.input.parameters.rollout")
    assert _generate(client, rollout="wave").status_code == 200


def test_a_bad_filter_beside_a_rollout_is_a_422_at_the_filter(client, rollout):
    body = assert_problem(_generate(client, rollout="wave", filter='nope="x"'), 422,
                          "body.input.parameters.filter")
    assert body["errors"][0]["value"] == 'nope="x"'

