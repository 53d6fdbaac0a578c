"""Start-up: indexes, the embedded store's one-process rule."""
import importlib.util
import pathlib
from types import SimpleNamespace

import pytest

from app import create_app
from tests.conftest import REAL_MONGO, client_with, make_config

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _gunicorn_conf():
    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "gunicorn.conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_create_indexes_command(runner, store):
    result = runner.invoke(args=["create-indexes"])
    assert result.exit_code == 0 and "Indexes created" in result.output
    assert any(i.get("unique") for i in store.db.clusters.index_information().values())


def test_several_workers_on_the_embedded_store_refuse_to_start(monkeypatch):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    server = SimpleNamespace(cfg=SimpleNamespace(workers=3))
    with pytest.raises(SystemExit):
        _gunicorn_conf().on_starting(server)


def test_one_worker_on_the_embedded_store_starts(monkeypatch):
    monkeypatch.delenv("MONGODB_URI", raising=False)
    _gunicorn_conf().on_starting(SimpleNamespace(cfg=SimpleNamespace(workers=1)))


def test_several_workers_on_mongodb_start(monkeypatch):
    monkeypatch.setenv("MONGODB_URI", "mongodb://localhost:1/x")
    _gunicorn_conf().on_starting(SimpleNamespace(cfg=SimpleNamespace(workers=4)))


def test_unreachable_database_is_503_quickly_and_health_stays_200():
    import time

    from app import create_app
    from inventory.config import Config
    from tests.conftest import client_with

    # port 1 on loopback: nothing listens, so the connection is refused
    app = create_app(Config(TESTING=True, MONGODB_URI="mongodb://127.0.0.1:1/inventory",
                            MONGODB_TIMEOUT_MS=300, SECRET_KEY="k"))
    client = client_with(app, "a-token-that-must-be-looked-up")
    started = time.monotonic()
    for path in ("/readyz", "/organizations"):
        response = client.get(path)
        assert response.status_code == 503, path
        assert response.mimetype == "application/problem+json"
        assert response.headers["Retry-After"]
    assert time.monotonic() - started < 10
    assert client.get("/healthz").status_code == 200


def test_demo_estate_loads_at_start(config):
    from app import create_app
    from tests.conftest import ADMIN_TOKEN, client_with

    config.DEMO = True
    app = create_app(config)
    client = client_with(app, ADMIN_TOKEN)
    assert len(client.get("/organizations").get_json()["results"]) == 3
    clusters = client.get("/kubeclusters?limit=100").get_json()["results"]
    assert len(clusters) == 12
    assert {c["infrastructure"]["cloud"]["provider"] for c in client.get(
        "/kubeplatforms").get_json()["results"]} == {"aws", "gcp", "azure"}
    due = client.get("/kubeclusters", query_string={
        "filter": 'environment="production" AND readiness.status="error"'}).get_json()["results"]
    assert {c["name"] for c in due} == {"analytics-prod", "warehouse-prod"}
    scans = client.get("/kubeclusters/shop-prod/scans").get_json()["results"]
    assert len(scans) == 7 and scans == sorted(scans, key=lambda s: s["scanned_on"])
    store = app.extensions["inventory.store"]
    if REAL_MONGO:
        store.db.client.drop_database(store.db.name)


def test_loading_the_demo_twice_changes_nothing(store):
    from inventory.cli.demo import load_demo

    assert load_demo(store) is True
    events = store.events.collection.count_documents({})
    assert load_demo(store) is False
    assert store.db.organizations.count_documents({}) == 3
    # nothing written and undone: no organizations made and deleted again in the feed
    assert store.events.collection.count_documents({}) == events


@pytest.mark.skipif(REAL_MONGO, reason="about the embedded store")
def test_seed_demo_command_refuses_on_the_embedded_store(runner):
    result = runner.invoke(args=["seed-demo"])
    assert result.exit_code != 0 and "INVENTORY_DEMO=1" in result.output



def test_mongodb_db_wins_over_the_uris_database():
    from inventory.config import Config
    from inventory.store import connect

    uri = "mongodb://127.0.0.1:1/production"
    assert connect(Config(MONGODB_URI=uri, MONGODB_DB="throwaway")).name == "throwaway"
    assert connect(Config(MONGODB_URI=uri, MONGODB_DB=None)).name == "production"
    assert connect(Config(MONGODB_URI="mongodb://127.0.0.1:1", MONGODB_DB=None)).name == "inventory"


def test_the_service_answers_503_while_the_database_is_away_and_recovers_by_itself():
    import time

    from app import create_app
    from inventory.config import Config
    from tests.fake_mongo import FakeMongo

    database = FakeMongo().start()
    port = database.port
    app = create_app(Config(TESTING=True, SECRET_KEY="k", MONGODB_TIMEOUT_MS=1000,
                            MONGODB_URI=f"mongodb://127.0.0.1:{port}/inventory?directConnection=true"))
    client = app.test_client()
    try:
        assert client.get("/readyz").status_code == 200
        database.stop()
        started = time.monotonic()
        response = client.get("/readyz")
        assert response.status_code == 503 and response.mimetype == "application/problem+json"
        assert time.monotonic() - started < 5
        assert client.get("/healthz").status_code == 200
        database = FakeMongo(port).start()  # the database comes back on its address
        deadline = time.monotonic() + 15
        while client.get("/readyz").status_code != 200:
            assert time.monotonic() < deadline, "the service did not recover by itself"
            time.sleep(0.2)
    finally:
        database.stop()


def test_the_app_starts_while_the_database_is_away(monkeypatch):
    """Nothing at start reads MongoDB (issue 43): the background work is
    started, to try at its own pace, and requests answer 503 meanwhile.
    Served, with the database coming back: tests/system/test_database_outage.py."""
    import threading

    from app import create_app
    from inventory.config import Config

    started = []

    class Thread(threading.Thread):
        def start(self):
            if self._target.__module__.startswith("inventory."):  # the service's: not run here
                started.append(self.name)
            else:  # pymongo's monitors
                super().start()
    monkeypatch.setattr(threading, "Thread", Thread)
    app = create_app(Config(TESTING=True, ANNOUNCE=True, DEMO=True, INVENTORY_ADMIN_TOKEN="t",
                            MONGODB_URI="mongodb://127.0.0.1:1/inventory",
                            MONGODB_TIMEOUT_MS=100))
    assert sorted(started) == ["delete-finisher", "event-sweeper", "retention-sweeper",
                               "rollout-advancer", "webhook-deliverer"]
    client = client_with(app, "t")
    assert client.get("/healthz").status_code == 200
    for path in ("/readyz", "/organizations"):
        answer = client.get(path)
        assert (answer.status_code, answer.mimetype) == (503, "application/problem+json")


def _names(hooks):
    return [f"{hook.__module__}.{getattr(hook, '__qualname__', '')}" for hook in hooks]


def test_one_gate_runs_the_layers_in_their_written_order(app):
    """Flask runs one hook of each kind, the gate's; the gate's layers,
    written in app.register_request_hooks, run in that order on the way in
    and in reverse on the way out."""
    assert _names(app.before_request_funcs[None]) == ["inventory.http.gate.Gate.enter"]
    assert _names(app.after_request_funcs[None]) == ["inventory.http.gate.Gate.leave"]
    assert _names(app.teardown_request_funcs[None]) == ["inventory.http.gate.Gate.close"]
    gate = app.extensions["inventory.http.gate"]
    assert _names(gate.ways_in) == [
        "inventory.http.observability.start_request",
        "inventory.http.request_checks.refuse_unservable",
        "inventory.http.rate_limits.Limits.enter", "inventory.http.auth.authenticate",
        "inventory.http.request_body.read_bounded_body",
        "inventory.http.idempotency.reserve_or_replay"]
    assert _names(gate.ways_out) == [
        "inventory.http.idempotency.keep_or_release", "inventory.http.rate_limits.Limits.leave",
        "inventory.http.response_headers.finish_response",
        "inventory.http.observability.finish_request"]
    assert _names(gate.closers) == ["inventory.http.rate_limits.Limits.close"]


def test_cors_headers_come_after_the_gates_way_out():
    """flask-cors' hook is registered before the gate's, so Flask runs it
    after: an answer kept for an Idempotency-Key replay holds no origin's
    headers."""
    cors_app = create_app(make_config(CORS_ORIGINS=["https://dash.example"]))
    assert _names(cors_app.after_request_funcs[None])[0].startswith("flask_cors.")
    assert _names(cors_app.after_request_funcs[None])[1:] == ["inventory.http.gate.Gate.leave"]


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's start-up passes")
def test_a_serving_start_begins_its_background_passes_after_its_own(monkeypatch):
    """Under gevent the sweeper and the delete finisher are greenlets: started
    before the start's own passes (the indexes' pass), their first passes
    over every record ran inside the start's turns and lengthened it (issue
    43). They start once those are done; the sweeper's first pass is also
    the look for what an earlier process left pending."""
    from inventory.store import Store
    from inventory.store.events import EventStore

    happened = []
    for owner, name in ((Store, "create_indexes"), (Store, "start_finishing_deletes"),
                        (EventStore, "start_sweeping")):
        monkeypatch.setattr(owner, name, lambda *args, name=name, **kwargs: happened.append(name))
    create_app(make_config(ANNOUNCE=True))
    assert happened == ["create_indexes", "start_sweeping", "start_finishing_deletes"]
