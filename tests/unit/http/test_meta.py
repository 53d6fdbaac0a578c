"""inventory.http.meta, the routes about the service itself (HTTP glue,
so through Flask's test client): the root lists every parameterless GET
path one step down, as the routes declare them; a JSON Schema is served
with its references as absolute URLs of served schemas, and the index
names every schema of the document; readiness answers 503 while the
database does not; the metrics are for unscoped tokens only. The
interface's view of the same routes: tests/api/test_service_index.py,
tests/api/test_bodies.py, tests/api/test_envelope.py."""
import pytest

from inventory.core.errors import Unavailable
from tests.conftest import assert_problem, client_with


def test_the_root_lists_what_the_routes_declare_and_nothing_else(app, anonymous):
    app.add_url_rule("/zz-new", "zz_new", lambda: "")  # before the first request
    app.add_url_rule("/zz-posted", "zz_posted", lambda: "", methods=["POST"])
    links = anonymous.get("/").get_json()["links"]
    assert links["zz-new"] == "http://localhost/zz-new"
    assert "zz-posted" not in links  # no GET
    assert all(url.count("/") == 3 and "<" not in url for url in links.values())


def test_a_served_schemas_references_are_absolute_urls_of_served_schemas(anonymous):
    answer = anonymous.get("/schemas/KubeClusterList.json")
    assert answer.status_code == 200 and answer.mimetype == "application/schema+json"
    schema = answer.get_json()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"] == "http://localhost/schemas/KubeClusterList.json"
    references = set()

    def collect(node):
        if isinstance(node, dict):
            references.update(v for k, v in node.items() if k == "$ref")
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for item in node:
                collect(item)
    collect(schema)
    assert references and all(ref.startswith("http://localhost/schemas/") for ref in references)
    for ref in references:
        assert anonymous.get(ref).status_code == 200, ref


def test_the_schema_index_names_every_schema_of_the_document(anonymous):
    components = anonymous.get("/openapi.json").get_json()["components"]["schemas"]
    index = anonymous.get("/schemas").get_json()["schemas"]
    assert index == {name: f"http://localhost/schemas/{name}.json" for name in components}


@pytest.mark.parametrize("name, status", [("Nope", 404), ("not-a-name", 422), ("x" * 65, 422)])
def test_a_schema_not_served_is_404_and_a_bad_name_422(anonymous, name, status):
    body = assert_problem(anonymous.get(f"/schemas/{name}.json"), status)
    if status == 422:
        assert body["errors"][0]["location"] == "path.name"


def test_readiness_is_503_while_the_database_does_not_answer(anonymous, store, monkeypatch):
    def down():
        raise Unavailable()
    monkeypatch.setattr(store, "ping", down)
    answer = anonymous.get("/readyz")
    assert_problem(answer, 503)
    assert answer.headers["Retry-After"] == "5"
    assert anonymous.get("/healthz").status_code == 200  # alive all the same


def test_metrics_are_for_unscoped_tokens_only(app, client, inventory):
    organization = inventory.org()["id"]
    scoped = client.post("/tokens", json={"name": "s", "role": "admin",
                                          "organization": organization}).get_json()["token"]
    body = assert_problem(client_with(app, scoped).get("/metrics"), 403)
    assert "not scoped to an organization" in body["detail"]
    answer = client.get("/metrics")
    assert answer.status_code == 200 and b"inventory_requests_total" in answer.get_data()
