"""Each operation's declaration is what is enforced and what is documented."""
import pytest
from flask.views import MethodView

from inventory.api.parser import Blueprint
from inventory.operations import Operation, collect, operation
from tests.conftest import assert_problem


@pytest.fixture
def declared(app):
    return app.extensions["inventory.operations"]


@pytest.fixture
def document(client):
    return client.get("/openapi.json").get_json()


def _operations(document):
    for path, item in document["paths"].items():
        for method, entry in item.items():
            if method in ("get", "post", "patch", "put", "delete"):
                yield path, method, entry


def test_every_route_is_declared_once_and_ids_are_unique(declared, document):
    ids = [d.operation_id for d in declared.values()]
    assert len(ids) == len(set(ids))
    assert sorted(ids) == sorted(entry["operationId"] for _, _, entry in _operations(document))


def test_an_undeclared_route_does_not_start(app):
    blp = Blueprint("forgotten", __name__)

    @blp.route("/forgotten")
    class Forgotten(MethodView):
        def get(self):
            return {}
    app.register_blueprint(blp)
    with pytest.raises(RuntimeError, match="no @operation"):
        collect(app)


def test_an_unknown_role_is_refused_at_import():
    with pytest.raises(ValueError):
        operation("x", role="superuser")


def test_the_document_says_what_each_declaration_says(declared, document):
    by_id = {d.operation_id: d for d in declared.values()}
    for path, method, entry in _operations(document):
        d = by_id[entry["operationId"]]
        responses, parameters = entry["responses"], {p["name"] for p in entry.get("parameters", [])
                                                     if p["in"] == "header"}
        assert ("401" in responses) == ("403" in responses) == (d.role is not None), path
        assert (entry.get("security") == []) == (d.role is None), path
        assert ("If-Match" in parameters) == d.if_match, path
        assert ("If-None-Match" in parameters) == d.if_none_match == ("304" in responses), path
        assert ("Idempotency-Key" in parameters) == d.idempotency_key, path
        for status in d.errors:
            assert str(status) in responses, (path, method, status)
        assert entry["description"], (path, method)
        success = next(r for s, r in responses.items() if s.startswith("2"))
        assert ("ETag" in success["headers"]) == d.etag, path
        assert bool(success.get("links")) == bool(d.links), path
        for link in success.get("links", {}).values():
            assert link["operationId"] in by_id


def test_roles_are_enforced_as_declared(app, client, declared):
    """A reader may call exactly the reader operations; the rest are 403."""
    reader = client.post("/tokens", json={"name": "r", "role": "reader"}).get_json()["token"]
    for (endpoint, method), d in declared.items():
        if d.role in (None, "reader"):
            continue
        rule = next(app.url_map.iter_rules(endpoint))
        path = rule.rule.replace("<org>", "org_00000000-0000-7000-8000-000000000000")
        for name in ("platform", "cluster", "scan", "token", "name"):
            path = path.replace(f"<{name}>", {"scan": "k8scs_00000000-0000-7000-8000-000000000000",
                                              "token": "tok_00000000-0000-7000-8000-000000000000"
                                              }.get(name, "x"))
        response = client.open(path, method=method, json={},
                               headers={"Authorization": f"Bearer {reader}"})
        assert_problem(response, 403)


def test_metrics_are_an_operation_of_the_document(document):
    entry = document["paths"]["/metrics"]["get"]
    assert entry["operationId"] == "getMetrics" and "401" in entry["responses"]


def test_creates_link_to_what_they_made(document):
    links = document["paths"]["/kubeclusters"]["post"]["responses"]["201"]["links"]
    assert {link["operationId"] for link in links.values()} == {
        "getKubeCluster", "updateKubeCluster", "deleteKubeCluster", "listKubeClusterScans",
        "recordKubeClusterScan"}


def test_bodies_are_required_exactly_when_they_are(client, inventory, document):
    cluster = inventory.cluster()
    assert client.post(f"/kubeclusters/{cluster['name']}/scans").status_code == 201
    assert client.patch(f"/kubeclusters/{cluster['name']}").status_code == 200
    paths = document["paths"]
    assert paths["/kubeclusters/{cluster}/scans"]["post"]["requestBody"]["required"] is False
    assert paths["/kubeclusters/{cluster}"]["patch"]["requestBody"]["required"] is False
    assert paths["/kubeclusters"]["post"]["requestBody"]["required"] is True


def test_the_document_names_its_servers(document):
    assert document["servers"][0]["url"] == "/"


def test_a_declaration_is_plain_data():
    d = Operation("x", role="reader", errors=(404,))
    assert d.role == "reader" and not d.if_match and d.links == {}
