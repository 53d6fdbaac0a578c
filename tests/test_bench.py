"""The bench's own estate is one the service serves correctly."""
from bench.seeding import seed
from tests.conftest import client_with


def test_bench_seeding_makes_records_the_service_serves(app, store):
    reader = client_with(app, seed(store, 30))
    assert len(reader.get("/kubeclusters?limit=100").get_json()["results"]) == 30
    first = reader.get("/kubeclusters?limit=1").get_json()["results"][0]
    scans = reader.get(f"/kubeclusters/{first['id']}/scans?limit=100").get_json()["results"]
    assert len(scans) == 30 and first["last_scanned_on"] == scans[-1]["scanned_on"]
    assert len(reader.get("/kubeclusters", query_string={"filter": 'version<"1.29"'}
                          ).get_json()["results"]) == 6
    assert reader.post(f"/kubeclusters/{first['name']}/scans", json={}).status_code == 201
