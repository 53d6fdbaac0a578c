"""What one tenant can learn of another: metrics, taken names; and which
browser origins may call (CORS)."""
from app import create_app
from tests.conftest import (
    ADMIN_TOKEN,
    ClosingClient,
    assert_problem,
    client_with,
    make_config,
)


def _token(client, role, organization=None):
    return client.post("/tokens", json={"name": role, "role": role,
                                        "organization": organization}).get_json()["token"]


def test_metrics_answer_unscoped_tokens_only(app, client, inventory):
    org = inventory.org()["id"]
    assert_problem(client_with(app, _token(client, "admin", org)).get("/metrics"), 403)
    response = client_with(app, _token(client, "reader")).get("/metrics")
    assert response.status_code == 200 and b"inventory_requests_total" in response.data


def test_a_taken_name_says_only_that_it_is_not_available(app, client, inventory):
    theirs = inventory.org(title="Theirs")
    inventory.platform(org=theirs["id"], name="secret-merger-platform")
    inventory.cluster(platform="secret-merger-platform", name="secret-merger")
    mine = inventory.org(title="Mine")["id"]
    writer = client_with(app, _token(client, "writer", mine))
    mine_platform = writer.post("/kubeplatforms", json={
        "name": "mine", "organization": mine, "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}})
    assert mine_platform.status_code == 201
    for path, body in (("/kubeplatforms", {"name": "secret-merger-platform", "organization": mine,
                                           "control_plane": {"provider": "eks"},
                                           "infrastructure": {"cloud": {"provider": "aws"}}}),
                       ("/kubeclusters", {"name": "secret-merger", "platform": "mine",
                                          "environment": "dev", "version": "1.30"})):
        problem = assert_problem(writer.post(path, json=body), 409)
        assert "is not available" in problem["detail"]
        text = str(problem)
        assert theirs["id"] not in text and "Theirs" not in text
        assert "secret-merger-platform" not in text or path == "/kubeplatforms"


def _app(**overrides):
    app = create_app(make_config(**overrides))
    app.test_client_class = ClosingClient
    return app


def test_no_origin_is_allowed_by_default():
    app = _app()
    client = client_with(app, ADMIN_TOKEN)
    response = client.get("/organizations", headers={"Origin": "https://dash.example.com"})
    assert "Access-Control-Allow-Origin" not in response.headers
    preflight = client.options("/organizations", headers={
        "Origin": "https://dash.example.com", "Access-Control-Request-Method": "POST"})
    assert "Access-Control-Allow-Origin" not in preflight.headers
    assert "not allowed (CORS)" in client.get("/openapi.json").get_json()["info"]["description"]


def test_allowed_origins_come_from_the_environment():
    app = _app(CORS_ORIGINS=["https://dash.example.com"])
    client = client_with(app, ADMIN_TOKEN)
    response = client.get("/organizations", headers={"Origin": "https://dash.example.com"})
    assert response.headers["Access-Control-Allow-Origin"] == "https://dash.example.com"
    assert "ETag" in response.headers["Access-Control-Expose-Headers"]
    assert "RateLimit" in response.headers["Access-Control-Expose-Headers"]
    preflight = app.test_client().options("/kubeclusters", headers={
        "Origin": "https://dash.example.com", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type, idempotency-key"})
    assert preflight.status_code == 200
    assert preflight.headers["Access-Control-Allow-Origin"] == "https://dash.example.com"
    assert "idempotency-key" in preflight.headers["Access-Control-Allow-Headers"].lower()
    other = client.get("/organizations", headers={"Origin": "https://evil.example.net"})
    assert "Access-Control-Allow-Origin" not in other.headers
    assert "`https://dash.example.com`" in client.get("/openapi.json").get_json()["info"][
        "description"]
