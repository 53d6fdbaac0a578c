"""Fixtures: a fresh app per test, on the embedded store by default or, when
MONGODB_URI is set, on a throwaway database of that server."""
import os
import threading
import uuid

import pytest
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from app import create_app
from inventory.config import Config

REAL_MONGO = bool(os.environ.get("MONGODB_URI"))


def _is_ferretdb():
    """Whether MONGODB_URI's server is FerretDB (scripts/wire's), not a
    MongoDB: its buildInfo names its own version."""
    if not REAL_MONGO:
        return False
    import pymongo

    client = pymongo.MongoClient(os.environ["MONGODB_URI"], serverSelectionTimeoutMS=10_000)
    try:
        return "ferretdbVersion" in client.admin.command("buildInfo")
    finally:
        client.close()


FERRETDB = _is_ferretdb()
# Tests run on the embedded store in memory, whatever the shell sets; those
# about the journal give it a directory of their own.
os.environ.pop("INVENTORY_DATA_DIR", None)
ADMIN_TOKEN = "test-admin-token"
# Fixtures kept beside the helpers they go with (tests/support/)
pytest_plugins = ["tests.support.races", "tests.support.node", "tests.support.kube_apiserver",
                  "tests.support.journaled"]


def client_with(app, token):
    """A test client that sends `token` on every request."""
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    return client


class ClosingClient(FlaskClient):
    """Flask's test client, reading each answer whole and closing it, as a
    server does once the last byte is sent (Flask's leaves that to the test:
    a request's slot among its caller's concurrent requests is held until
    then, inventory.http.rate_limits)."""

    def open(self, *args, buffered=True, **kwargs):
        return super().open(*args, buffered=buffered, **kwargs)


def make_config(**overrides):
    """A test's Config: on MONGODB_URI, in a throwaway database of its own."""
    overrides = {"TESTING": True, "INVENTORY_ADMIN_TOKEN": ADMIN_TOKEN, **overrides}
    if REAL_MONGO:
        overrides.setdefault("MONGODB_DB", f"inventory_test_{uuid.uuid4().hex[:12]}")
    return Config(**overrides)


@pytest.fixture
def config():
    return make_config()


@pytest.fixture
def app(config):
    app = create_app(config)
    app.test_client_class = ClosingClient
    store = app.extensions["inventory.store"]
    if REAL_MONGO:
        store.create_indexes()
    yield app
    if REAL_MONGO:
        store.db.client.drop_database(store.db.name)


@pytest.fixture
def client(app):
    """A client with the unscoped admin token."""
    return client_with(app, ADMIN_TOKEN)


@pytest.fixture
def base_url(app):
    """The app served by a threaded HTTP server on loopback, for clients that
    speak HTTP themselves (generated clients, Node.js)."""
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture
def anonymous(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def store(app):
    return app.extensions["inventory.store"]


class Inventory:
    """Creates records through the API, asserting each create succeeded."""

    def __init__(self, client):
        self.client = client
        self._count = 0

    def _post(self, path, body):
        response = self.client.post(path, json=body)
        assert response.status_code == 201, response.get_json()
        return response.get_json()

    def _name(self, stem):
        self._count += 1
        return f"{stem}-{self._count}"

    def org(self, title="Acme", **fields):
        return self._post("/organizations", {"title": title, **fields})

    def platform(self, org=None, name=None, **fields):
        org = org or self.org()["id"]
        body = {"name": name or self._name("platform"), "organization": org,
                "control_plane": {"provider": "eks"},
                "infrastructure": {"cloud": {"provider": "aws"}}, **fields}
        return self._post("/kubeplatforms", body)

    def cluster(self, platform=None, name=None, **fields):
        platform = platform or self.platform()["name"]
        body = {"name": name or self._name("cluster"), "platform": platform,
                "environment": "production", "version": "1.31.2", **fields}
        return self._post("/kubeclusters", body)

    def scan(self, cluster, scanned_on=None):
        body = {} if scanned_on is None else {"scanned_on": scanned_on}
        return self._post(f"/kubeclusters/{cluster}/scans", body)


@pytest.fixture
def inventory(client):
    return Inventory(client)


def assert_problem(response, status, location=None):
    """The response is the interface's error body with `status`; returns it."""
    assert response.status_code == status
    assert response.mimetype == "application/problem+json"
    body = response.get_json()
    assert set(body) == {"$schema", "status", "title", "detail", "type", "instance", "errors"}
    assert body["status"] == status
    assert body["instance"].startswith("urn:uuid:")
    assert body["$schema"].endswith("/schemas/Error.json")
    if location is not None:
        assert location in [e["location"] for e in body["errors"]], body
    return body


def walk(client, path, **params):
    """Every record of a list, page by page. Unfiltered, no page but the last
    is short; filtered, a page may be short or empty (it examined its bound
    of records) yet carry a token."""
    records, token, pages, seen = [], None, 0, set()
    while True:
        assert token not in seen, "a token came back again: the walk would never end"
        seen.add(token)
        query = dict(params, **({"continue": token} if token else {}))
        response = client.get(path, query_string=query)
        assert response.status_code == 200, response.get_json()
        body = response.get_json()
        pages += 1
        token = body["pagination"]["continue"]
        if token and "filter" not in params:
            limit = int(params.get("limit") or 20)
            assert len(body["results"]) == limit, "an unfiltered page with a token is full"
        records.extend(body["results"])
        if not token:
            return records, pages
