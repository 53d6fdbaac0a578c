"""The embedded store's envelope: /readyz says its size against it, and
past it the service says so at start and in /readyz."""
import logging

import pytest

from app import create_app
from inventory.core import caps
from inventory.resources.clusters.store import ClusterStore
from tests.conftest import REAL_MONGO, make_config

pytestmark = pytest.mark.skipif(REAL_MONGO, reason="the embedded store's envelope")


def test_readyz_says_the_size_against_the_envelope(anonymous, inventory):
    inventory.cluster()
    body = anonymous.get("/readyz").get_json()
    assert body["status"] == "ok"
    assert body["envelope"] == {"clusters": 1, "scans": 0, "within": True}
    assert (caps.ENVELOPE_CLUSTERS, caps.ENVELOPE_SCANS) == (100_000, 1_000_000)


def test_past_the_envelope_it_says_so_at_start_and_in_readyz(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(ClusterStore, "envelope", 1)
    config = make_config(INVENTORY_DATA_DIR=str(tmp_path))
    app = create_app(config)
    client = app.test_client()
    headers = {"Authorization": f"Bearer {config.INVENTORY_ADMIN_TOKEN}"}
    org = client.post("/organizations", json={"title": "o"}, headers=headers).get_json()
    client.post("/kubeplatforms", headers=headers, json={
        "name": "p", "organization": org["id"], "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}})
    for name in ("a", "b"):
        assert client.post("/kubeclusters", headers=headers, json={
            "name": name, "platform": "p", "environment": "dev",
            "version": "1.31.0"}).status_code == 201
    assert client.get("/readyz").get_json()["envelope"]["within"] is False
    app.extensions["inventory.store"].db.journal.close()
    with caplog.at_level(logging.WARNING):
        create_app(config).extensions["inventory.store"].db.journal.close()
    assert "past the envelope" in caplog.text
