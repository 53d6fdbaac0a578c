"""Start-up: indexes, the embedded store's one-process rule."""
import importlib.util
import pathlib
from types import SimpleNamespace

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


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
