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
