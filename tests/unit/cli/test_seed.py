"""`flask --app app seed`: a synthetic estate the API reads like its own
records (lists, filters, a summary, quotas' counts, scans' order), and
that it can go on writing into (creates, cascading deletes)."""
from tests.conftest import assert_problem


def test_the_seeded_estate_reads_and_writes_like_api_made_records(app, runner, client, store):
    result = runner.invoke(args=["seed", "--clusters", "25", "--scans-per-cluster", "3",
                                 "--organizations", "4"])
    assert result.exit_code == 0, result.output
    assert "25 clusters and 75 scans" in result.output
    clusters = client.get("/kubeclusters?limit=100").get_json()["results"]
    assert len(clusters) == 25 and clusters == sorted(clusters, key=lambda c: c["name"])
    first = clusters[0]
    assert first["id"].startswith("k8scl_") and first["support"]["status"]
    assert first["last_scanned_on"] is not None and first["endpoint"] is None
    scans = client.get(f"/kubeclusters/{first['name']}/scans").get_json()["results"]
    assert len(scans) == 3 and [s["scanned_on"] for s in scans] == sorted(
        s["scanned_on"] for s in scans)
    assert scans[-1]["scanned_on"] == first["last_scanned_on"]
    production = client.get("/kubeclusters", query_string={
        "filter": 'environment="production"', "limit": 100}).get_json()["results"]
    assert {c["environment"] for c in production} == {"production"} and len(production) == 9
    ordered = client.get("/kubeclusters", query_string={"order_by": "version desc",
                                                        "limit": 100}).get_json()["results"]
    assert len(ordered) == 25
    summary = client.get("/kubeclusters:summary?group_by=environment").get_json()
    assert summary["total"] == 25
    orgs = client.get("/organizations").get_json()["results"]
    assert len(orgs) == 4
    for org in orgs:  # the quotas' counts are what each holds
        doc = store.organizations.collection.find_one({"_id": org["id"]})
        held = store.clusters.collection.count_documents({"organization": org["id"]})
        assert doc["_used"]["clusters"] == held and doc["_used"]["platforms"] == 1
    assert client.get("/events").get_json()["results"] == []  # an estate, not a history
    # the API goes on writing into it
    platform = client.get("/kubeplatforms?limit=1").get_json()["results"][0]
    made = client.post("/kubeclusters", json={"name": "new-one", "platform": platform["name"],
                                              "environment": "dev", "version": "1.31.0"})
    assert made.status_code == 201
    assert_problem(client.delete(f"/organizations/{platform['organization']}"), 409)
    assert client.delete(f"/organizations/{platform['organization']}?force=true").status_code \
        == 204
    # the first organization held 7 (25 over 4, the remainder first) and the new one
    assert len(client.get("/kubeclusters?limit=100").get_json()["results"]) == 25 + 1 - 8


def test_a_seed_into_a_data_dir_ends_as_one_snapshot_the_next_start_reads(tmp_path):
    """The journaled estate is compacted at the end: one BSON snapshot and
    an empty segment, so a start reads it in C rather than line by line."""
    import os

    from app import create_app
    from inventory.config import Config

    data = tmp_path / "data"
    app = create_app(Config(TESTING=True, INVENTORY_DATA_DIR=str(data), INVENTORY_FSYNC="no"))
    result = app.test_cli_runner().invoke(args=["seed", "--clusters", "12",
                                                "--scans-per-cluster", "2"])
    assert result.exit_code == 0, result.output
    app.extensions["inventory.store"].db.journal.close()
    names = sorted(os.listdir(data))
    snapshots = [name for name in names if name.startswith("snapshot-")]
    assert len(snapshots) == 1 and snapshots[0].endswith(".bson")
    segments = [name for name in names if name.startswith("journal-")]
    assert segments == [f"journal-{snapshots[0][9:15]}.jsonl"]
    assert os.path.getsize(data / segments[0]) == 0
    again = create_app(Config(TESTING=True, INVENTORY_DATA_DIR=str(data), INVENTORY_FSYNC="no"))
    assert again.extensions["inventory.store"].clusters.collection.count_documents({}) == 12
    again.extensions["inventory.store"].db.journal.close()
