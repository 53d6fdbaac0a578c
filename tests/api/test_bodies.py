"""`$schema`, Link headers, served JSON Schemas, trailing slashes, health."""
import pytest

from inventory.config import Config
from tests.conftest import ADMIN_TOKEN, REAL_MONGO, client_with


def test_record_schema_url_is_absolute_and_linked(config):
    from app import create_app

    config.ALLOWED_HOSTS = ["inv.example.com"]
    client = client_with(create_app(config), ADMIN_TOKEN)
    org = client.post("/organizations", json={"title": "A"},
                      base_url="https://inv.example.com").get_json()
    response = client.get(f"/organizations/{org['id']}", base_url="https://inv.example.com")
    url = "https://inv.example.com/schemas/Organization.json"
    assert response.get_json()["$schema"] == url
    assert response.headers["Link"] == f'<{url}>; rel="describedBy"'


def test_a_replayed_create_names_its_schema_in_link_too(client):
    headers = {"Idempotency-Key": "link-1"}
    first = client.post("/organizations", json={"title": "A"}, headers=headers)
    again = client.post("/organizations", json={"title": "A"}, headers=headers)
    assert again.headers["Idempotent-Replayed"] == "true"
    link = '<http://localhost/schemas/Organization.json>; rel="describedBy"'
    assert first.headers["Link"] == again.headers["Link"] == link


def test_lists_and_304s_link_as_their_bodies_say(client):
    listed = client.get("/organizations")
    assert listed.headers["Link"] == '<http://localhost/schemas/OrganizationList.json>; rel="describedBy"'
    org = client.post("/organizations", json={"title": "A"})
    again = client.get(f"/organizations/{org.get_json()['id']}",
                       headers={"If-None-Match": org.headers["ETag"]})
    assert again.status_code == 304 and "Link" not in again.headers


def test_dumping_a_body_changes_no_request_state(app):
    from flask import g

    from schemas.organizations import OrganizationSchema

    with app.test_request_context("/organizations"):
        before = dict(vars(g))
        body = OrganizationSchema().dump({"id": "x", "title": "A"})
        assert body["$schema"] == "http://localhost/schemas/Organization.json"
        assert dict(vars(g)) == before


def test_forwarded_headers_are_ignored_unless_trusted(client):
    response = client.get("/organizations", headers={"X-Forwarded-Proto": "https",
                                                     "X-Forwarded-Host": "evil.example"})
    assert response.get_json()["$schema"] == "http://localhost/schemas/OrganizationList.json"


def test_forwarded_headers_are_honoured_behind_a_trusted_proxy(config):
    from app import create_app

    config.TRUST_PROXY = True
    client = client_with(create_app(config), ADMIN_TOKEN)
    response = client.get("/organizations", headers={"X-Forwarded-Proto": "https",
                                                     "X-Forwarded-Host": "inv.example.com"})
    assert response.get_json()["$schema"] == "https://inv.example.com/schemas/OrganizationList.json"


@pytest.mark.parametrize("name", ["Organization", "KubePlatform", "KubeCluster", "KubeClusterScan",
                                  "OrganizationList", "KubePlatformList", "KubeClusterList",
                                  "KubeClusterScanList", "Error"])
def test_every_schema_named_in_a_body_is_served(client, name):
    response = client.get(f"/schemas/{name}.json")
    assert response.status_code == 200
    schema = response.get_json()
    assert schema["$id"] == f"http://localhost/schemas/{name}.json"
    assert schema["type"] == "object"
    assert "#/components" not in response.get_data(as_text=True)


def test_unknown_schema_is_404(client):
    assert client.get("/schemas/Nope.json").status_code == 404


def test_error_body_names_its_schema_too(client):
    response = client.get("/nope")
    assert response.headers["Link"] == '<http://localhost/schemas/Error.json>; rel="describedBy"'


@pytest.mark.parametrize("path", ["/organizations", "/organizations/", "/healthz/"])
def test_paths_answer_with_and_without_trailing_slash_without_redirect(client, path):
    assert client.get(path).status_code == 200


def test_health_and_readiness(client):
    assert client.get("/healthz").get_json() == {"$schema": "http://localhost/schemas/Health.json",
                                                 "status": "ok"}
    ready = client.get("/readyz").get_json()
    assert ready["$schema"] == "http://localhost/schemas/Readiness.json" and ready["status"] == "ok"
    # the embedded store's size against its envelope; MongoDB has none
    assert ("envelope" in ready) == (not REAL_MONGO)


def test_openapi_document_is_3_1_and_lists_every_route(client):
    spec = client.get("/openapi.json").get_json()
    assert spec["openapi"].startswith("3.1")
    for path in ("/organizations", "/organizations/{org}", "/kubeplatforms",
                 "/kubeplatforms/{platform}", "/kubeclusters", "/kubeclusters/{cluster}",
                 "/kubeclusters/{cluster}/scans"):
        assert path in spec["paths"], path


def test_config_reads_the_environment(monkeypatch):
    monkeypatch.setenv("MONGODB_URI", "mongodb://db.example:27017/inv")
    monkeypatch.setenv("TRUST_PROXY", "true")
    config = Config()
    assert config.MONGODB_URI == "mongodb://db.example:27017/inv" and config.TRUST_PROXY
    assert not config.embedded


def test_openapi_document_is_valid(client):
    from openapi_spec_validator import validate

    validate(client.get("/openapi.json").get_json())


def test_openapi_documents_errors_security_and_headers(client):
    spec = client.get("/openapi.json").get_json()
    assert spec["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"
    problem = spec["components"]["responses"]["Problem422"]
    assert list(problem["content"]) == ["application/problem+json"]
    delete = spec["paths"]["/kubeplatforms/{platform}"]["delete"]
    assert "content" not in delete["responses"]["204"]
    assert {"401", "403", "404", "409", "412", "422"} <= set(delete["responses"])
    post = spec["paths"]["/kubeclusters"]["post"]
    assert {"Location", "ETag"} <= set(post["responses"]["201"]["headers"])
    assert any(p["name"] == "Idempotency-Key" for p in post["parameters"])
    assert spec["paths"]["/healthz"]["get"]["security"] == []
    schemas = spec["components"]["schemas"]
    assert "code" not in schemas["Error"]["properties"]  # not flask-smorest's error
