"""Each operation's declaration is what is enforced and what is documented."""
import re

import pytest
from flask.views import MethodView

from inventory.http.blueprint import Blueprint
from inventory.http.operations import Operation, collect, operation
from tests.conftest import assert_problem


@pytest.fixture
def declared(app):
    """The API's operations (the console's pages are declared too, but they
    answer HTML and are not in the document: tests/api/test_console_*.py)."""
    return {route: d for route, d in app.extensions["inventory.http.operations"].items()
            if not d.page}


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


def test_every_path_parameter_of_every_operation_is_checked(app, client, declared):
    """No view takes any value for a key: for every operation and each of
    its path parameters, a value the key does not allow is a 422 at
    `path.<name>` (and the view never runs), the others being well formed."""
    from inventory.http.blueprint import PATH_KEYS, path_parameters

    good = {name: key.example for name, key in PATH_KEYS.items()}  # as the specs declare
    checked = 0
    for (endpoint, method), _ in declared.items():
        rule = next(app.url_map.iter_rules(endpoint))
        for bad in path_parameters(rule.rule):
            path = rule.rule
            for name in path_parameters(rule.rule):
                path = path.replace(f"<{name}>", "Not_A-Key!" if name == bad else good[name])
            response = client.open(path, method=method, json={})
            assert_problem(response, 422, f"path.{bad}")
            checked += 1
    assert checked >= 15


def test_a_delete_takes_force_where_children_refuse_an_unforced_one(document):
    """Whether a record's DELETE takes `force` is what its children declare
    (`refuses_parent_delete`), so that the 409 it answers can be forced."""
    from inventory.resources import SPECS

    for spec in SPECS:
        item = document["paths"].get(f"/{spec.path}/{{{spec.path_key.name}}}", {})
        if spec.nested or "delete" not in item:
            continue
        refused = any(child.parent == spec.name and child.refuses_parent_delete
                      for child in SPECS)
        takes = {p["name"] for p in item["delete"].get("parameters", [])}
        assert ("force" in takes) == refused, spec.name


def test_every_path_key_declares_an_example_it_allows():
    from inventory.http.blueprint import PATH_KEYS

    for name, key in PATH_KEYS.items():
        assert key.example is not None and key.matches(key.example), name


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
    from inventory.http.blueprint import PATH_KEYS, path_parameters

    reader = client.post("/tokens", json={"name": "r", "role": "reader"}).get_json()["token"]
    for (endpoint, method), d in declared.items():
        if d.role in (None, "reader"):
            continue
        rule = next(app.url_map.iter_rules(endpoint))
        path = rule.rule
        for name in path_parameters(rule.rule):
            path = path.replace(f"<{name}>", PATH_KEYS[name].example)
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


# -- a document exact for typed clients ---------------------------------------


def _walk_schema(node, path=()):
    if isinstance(node, dict):
        yield path, node
        for key, inner in node.items():
            yield from _walk_schema(inner, path + (key,))
    elif isinstance(node, list):
        for index, inner in enumerate(node):
            yield from _walk_schema(inner, path + (index,))


def test_responses_require_every_field_the_server_always_sends(document):
    schemas = document["components"]["schemas"]
    for name in ("Organization", "KubePlatform", "KubeCluster", "KubeClusterScan", "Token"):
        properties = set(schemas[name]["properties"]) - {"$schema"}  # absent inside lists
        assert set(schemas[name]["required"]) == properties, name
    for name in ("NewToken", "Error", "KubeClusterList", "Health"):
        assert set(schemas[name]["required"]) == set(schemas[name]["properties"]), name


def test_changes_have_no_defaults_and_mark_what_cannot_change(document):
    schemas = document["components"]["schemas"]
    for name in ("OrganizationPatch", "KubePlatformPatch", "KubeClusterPatch"):
        assert "required" not in schemas[name], name
        assert not [p for p, node in _walk_schema(schemas[name]) if "default" in node], name
    assert schemas["KubeClusterPatch"]["properties"]["name"]["readOnly"] is True
    assert schemas["KubeClusterPatch"]["properties"]["platform"]["readOnly"] is True
    assert schemas["KubePlatformPatch"]["properties"]["organization"]["readOnly"] is True


def test_requests_accept_the_read_only_fields_a_client_reads(client, inventory, document):
    cluster = inventory.cluster()
    read = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    create = document["components"]["schemas"]["KubeClusterCreate"]["properties"]
    assert set(read) <= set(create)
    assert client.patch(f"/kubeclusters/{cluster['name']}", json=read).status_code == 200


def test_rules_the_server_enforces_are_in_the_schema(document):
    labels = document["components"]["schemas"]["KubeCluster"]["properties"]["labels"]
    assert labels["maxProperties"] == 64 and "maxLength" not in labels
    keys = labels["propertyNames"]  # the Kubernetes label key rule, as a client checks it
    assert keys["maxLength"] == 253 + 1 + 63
    assert all(re.fullmatch(keys["pattern"], key) for key in (
        "team", "app.kubernetes.io/name", "topology.kubernetes.io/region", "a" * 63,
        f"{'p' * 253}/{'n' * 63}"))
    assert not any(re.fullmatch(keys["pattern"], key) for key in (
        "", "Example.com/name", "a..b/name", "a/b/c", "-team", "team.", "a" * 64, "/name"))
    title = document["components"]["schemas"]["KubeClusterCreate"]["properties"]["title"]
    assert "\\u2028" in title["pattern"]


def test_list_parameters_say_the_real_default_and_are_never_null(document):
    for path, method, entry in _operations(document):
        for parameter in entry.get("parameters", []):
            if parameter["name"] == "limit":
                assert parameter["schema"]["default"] == 20, path
            if parameter["name"] in ("continue", "filter"):
                assert parameter["schema"]["type"] == "string", path


def test_every_filter_example_is_accepted_by_its_own_list(client, inventory, document):
    cluster = inventory.cluster()
    rollout = client.post("/rollouts", json={"name": "wave", "target": "1.32", "stages": [
        {"name": "all", "filter": ""}]}).get_json()
    for path, method, entry in _operations(document):
        for parameter in entry.get("parameters", []):
            if parameter["name"] != "filter":
                continue
            concrete = path.replace("{cluster}", cluster["name"]).replace(
                "{rollout}", rollout["name"])
            # other required parameters (a summary's group_by) take their first example
            required = {p["name"]: p["schema"]["examples"][0] for p in entry["parameters"]
                        if p["in"] == "query" and p.get("required")}
            for example in parameter["schema"]["examples"]:
                response = client.get(concrete, query_string={**required, "filter": example})
                assert response.status_code == 200, (path, example, response.get_json())
