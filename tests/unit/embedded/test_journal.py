"""The embedded store survives its process (inventory/embedded/journal.py,
the parts composed): every write through the API is journaled in the data
directory before its call returns and replayed by the next process; a
stop during a fault writes the snapshot first; the served tests kill
gunicorn's worker and the whole server. The parts' own rules are in the
test files of their modules."""
import os
import signal
import time

import pytest

from inventory.config import Config
from inventory.embedded.database import embedded_database
from inventory.resources import store_classes
from inventory.resources.clusters.store import ClusterStore
from inventory.store import Store
from tests.conftest import ADMIN_TOKEN, Inventory, client_with
from tests.support.directory_faults import delete_segment
from tests.support.journaled import ids, journaled_gunicorn, make_app, make_app_after, open_database

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


def test_every_write_through_the_api_survives_a_new_process(tmp_path, contents):
    app = make_app(tmp_path)
    client = client_with(app, ADMIN_TOKEN)
    inventory = Inventory(client)
    org = inventory.org()
    platform = inventory.platform(org["id"])
    cluster = inventory.cluster(platform["name"], labels={"team": "a"})
    doomed = inventory.cluster(platform["name"])
    for i in range(5):
        inventory.scan(cluster["name"], 1_700_000_000 + i)
    assert client.patch(f"/kubeclusters/{cluster['name']}",  # a keyed update
                        json={"labels": {"team": "b"}}).status_code == 200
    inventory.scan(doomed["name"])
    assert client.delete(f"/kubeclusters/{doomed['name']}").status_code == 204  # and its scans
    token = client.post("/tokens", json={"name": "scanner", "role": "writer"}).get_json()
    revoked = client.post("/tokens", json={"name": "old", "role": "reader"}).get_json()
    assert client.delete(f"/tokens/{revoked['id']}").status_code == 204
    replayed = client.post("/organizations", json={"title": "Once"},
                           headers={"Idempotency-Key": "k-1"})
    assert replayed.status_code == 201
    page = client.get(f"/kubeclusters/{cluster['name']}/scans?limit=2").get_json()
    store = app.extensions["inventory.store"]
    before = contents(store.db)
    assert {"settings", "idempotency", "tokens", "scans"} <= set(before)

    again = make_app_after(app, tmp_path)
    store = again.extensions["inventory.store"]
    assert contents(store.db) == before
    client = client_with(again, ADMIN_TOKEN)
    assert client.get(f"/kubeclusters/{cluster['name']}").get_json()["labels"] == {"team": "b"}
    assert client.get(f"/kubeclusters/{doomed['name']}").status_code == 404
    assert len(client.get(f"/kubeclusters/{cluster['name']}/scans").get_json()["results"]) == 5
    assert client_with(again, revoked["token"]).get("/kubeclusters").status_code == 401
    # the token issued before works after, and so does a continuation token
    # (its signing key is in the data directory too)
    assert client_with(again, token["token"]).get("/kubeclusters").status_code == 200
    rest = client.get(f"/kubeclusters/{cluster['name']}/scans",
                      query_string={"limit": 2, "continue": page["pagination"]["continue"]})
    assert rest.status_code == 200 and len(rest.get_json()["results"]) == 2
    retried = client.post("/organizations", json={"title": "Once"},
                          headers={"Idempotency-Key": "k-1"})
    assert retried.headers["Idempotent-Replayed"] == "true"
    assert retried.get_json()["id"] == replayed.get_json()["id"]


def test_memory_only_without_a_data_directory(monkeypatch):
    monkeypatch.delenv("INVENTORY_DATA_DIR", raising=False)
    assert Config().INVENTORY_DATA_DIR is None and not Config().journaled
    monkeypatch.setenv("INVENTORY_DATA_DIR", "")
    assert not Config().journaled
    monkeypatch.setenv("INVENTORY_DATA_DIR", ".data")
    assert Config().journaled and not Config(MONGODB_URI="mongodb://x").journaled
    store = Store(embedded_database("inventory"), store_classes())
    assert store.db.journal is None


def test_a_stop_during_a_fault_writes_the_snapshot_first(tmp_path):
    """The data since the fault lives in memory only: a clean stop saves it."""
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i} for i in range(3)])
    delete_segment(tmp_path)
    db.journal.inspect()
    db.journal.close()
    assert ids(open_database(tmp_path)) == [0, 1, 2]


def _write_estate(server, clusters=20, scans=5):
    """Records written over HTTP: what was acknowledged."""
    status, _, org = server.request("POST", "/organizations", {"title": "Acme"})
    assert status == 201
    assert server.request("POST", "/kubeplatforms", {
        "name": "p", "organization": org["id"], "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}})[0] == 201
    acknowledged = {"clusters": set(), "scans": set()}
    for i in range(clusters):
        status, _, cluster = server.request("POST", "/kubeclusters", {
            "name": f"c{i}", "platform": "p", "environment": "dev", "version": "1.30.0"})
        assert status == 201
        acknowledged["clusters"].add(cluster["name"])
        for j in range(scans):
            status, _, scan = server.request("POST", f"/kubeclusters/c{i}/scans",
                                          {"scanned_on": 1_700_000_000 + j})
            assert status == 201
            acknowledged["scans"].add(scan["id"])
    status, _, token = server.request("POST", "/tokens", {"name": "scanner", "role": "writer"})
    assert status == 201
    acknowledged["token"] = token["token"]
    return acknowledged


def _assert_all_there(server, acknowledged):
    assert server.request("GET", "/readyz")[0] == 200
    status, _, page = server.request("GET", "/kubeclusters?limit=100")
    assert status == 200
    assert {c["name"] for c in page["results"]} == acknowledged["clusters"]
    scans = set()
    for name in acknowledged["clusters"]:
        status, _, page = server.request("GET", f"/kubeclusters/{name}/scans?limit=100")
        scans |= {s["id"] for s in page["results"]}
    assert scans == acknowledged["scans"]
    assert server.request("GET", "/kubeclusters", token=acknowledged["token"])[0] == 200


@pytest.mark.slow
def test_served_kill_9_of_the_worker_and_a_restart_lose_no_acknowledged_write(tmp_path):
    directory = tmp_path / "data"
    server = journaled_gunicorn(directory)
    try:
        acknowledged = _write_estate(server)
        first = server.worker()
        os.kill(first, signal.SIGKILL)  # as an out-of-memory kill does
        deadline = time.monotonic() + 30
        while server.worker() == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.worker() != first
        server.wait_ready()
        _assert_all_there(server, acknowledged)
        # now: a scan from further ahead than the clocks' skew is refused
        status = server.request("POST", "/kubeclusters/c0/scans",
                                {"scanned_on": int(time.time())}).status
        assert status == 201  # the new worker owns the directory and writes on
        status, _, page = server.request("GET", "/kubeclusters/c0/scans?limit=100")
        acknowledged["scans"] |= {s["id"] for s in page["results"]}
    finally:
        server.stop()  # SIGTERM of the whole server
    assert server.process.returncode == 0
    server = journaled_gunicorn(directory)
    try:
        _assert_all_there(server, acknowledged)
    finally:
        server.stop()


def test_a_start_adds_missing_order_keys_only_when_the_orderings_changed(tmp_path, monkeypatch):
    """The start-up pass over every record (mongomock reads them all) runs
    when the declared order keys differ from those the last pass recorded."""
    app = make_app(tmp_path)
    Inventory(client_with(app, ADMIN_TOKEN)).cluster()
    database = app.extensions["inventory.store"].db
    field = next(f for f in database.clusters.find_one({}) if f.startswith("_order_"))
    database.clusters.update_many({}, {"$unset": {field: ""}})  # as before an ordering existed
    passes = []
    real = ClusterStore.add_missing_order_keys
    monkeypatch.setattr(ClusterStore, "add_missing_order_keys",
                        lambda self: passes.append(1) or real(self))
    app = make_app_after(app, tmp_path)  # the orderings recorded are today's: no pass
    assert passes == [] and field not in app.extensions["inventory.store"].db.clusters.find_one({})
    database = app.extensions["inventory.store"].db
    database.settings.update_one({"_id": "order-keys"}, {"$set": {"value.clusters": []}})
    app = make_app_after(app, tmp_path)  # a release that declares a new ordering
    assert passes == [1] and field in app.extensions["inventory.store"].db.clusters.find_one({})
    app = make_app_after(app, tmp_path)
    assert passes == [1]
