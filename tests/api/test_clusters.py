import pytest

from tests.conftest import assert_problem


def test_cluster_copies_its_platforms_organization(inventory):
    platform = inventory.platform()
    cluster = inventory.cluster(platform=platform["name"])
    assert cluster["organization"] == platform["organization"]
    assert cluster["id"].startswith("k8scl_")
    assert cluster["last_scanned_on"] is None


def test_organization_sent_on_create_is_ignored(client, inventory):
    platform = inventory.platform()
    other = inventory.org()
    cluster = inventory.cluster(platform=platform["name"], organization=other["id"])
    assert cluster["organization"] == platform["organization"]


def test_cluster_is_addressable_by_name_and_by_id(client, inventory):
    cluster = inventory.cluster()
    by_name = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    by_id = client.get(f"/kubeclusters/{cluster['id']}").get_json()
    assert by_name == by_id == cluster


def test_unknown_platform_is_422(client):
    response = client.post("/kubeclusters", json={"name": "c", "platform": "nope",
                                                  "environment": "dev", "version": "1.30"})
    assert_problem(response, 422, "body.platform")


def test_duplicate_cluster_name_is_409(client, inventory):
    cluster = inventory.cluster()
    response = client.post("/kubeclusters", json={
        "name": cluster["name"], "platform": cluster["platform"], "environment": "dev",
        "version": "1.30.1"})
    assert_problem(response, 409)


@pytest.mark.parametrize("field", ["platform", "environment", "version", "name"])
def test_required_field_missing_is_422(client, inventory, field):
    platform = inventory.platform()
    body = {"name": "c", "platform": platform["name"], "environment": "dev", "version": "1.30.1"}
    del body[field]
    assert_problem(client.post("/kubeclusters", json=body), 422, f"body.{field}")


@pytest.mark.parametrize("version", ["1.31.2", "v1.31.2-eks-1234", "1.29", "1.28.3+k3s1"])
def test_kubernetes_versions_are_accepted(inventory, version):
    assert inventory.cluster(version=version)["version"] == version


@pytest.mark.parametrize("version", ["latest", "1", "", "1.2.3.4.5", "v", 131])
def test_a_version_that_is_not_one_is_422(client, inventory, version):
    platform = inventory.platform()
    response = client.post("/kubeclusters", json={"name": "c", "platform": platform["name"],
                                                  "environment": "dev", "version": version})
    assert_problem(response, 422, "body.version")


@pytest.mark.parametrize("labels, location", [
    ({"bad key": "x"}, "body.labels"),
    ({"team": 5}, "body.labels"),
    ({"team": None}, "body.labels"),
    ({f"k{i}": "v" for i in range(65)}, "body.labels"),
    ({"team": "x" * 257}, "body.labels"),
    ("team=core", "body.labels"),
])
def test_bad_labels_are_422(client, inventory, labels, location):
    platform = inventory.platform()
    response = client.post("/kubeclusters", json={"name": "c", "platform": platform["name"],
                                                  "environment": "dev", "version": "1.30.0",
                                                  "labels": labels})
    body = assert_problem(response, 422)
    assert all(e["location"].startswith(location) for e in body["errors"])


def test_patch_merges_labels_and_null_removes_one(client, inventory):
    cluster = inventory.cluster(labels={"team": "core", "tier": "gold"})
    response = client.patch(f"/kubeclusters/{cluster['id']}",
                            json={"labels": {"tier": None, "owner": "ops"}, "version": "1.32.0"})
    assert response.status_code == 200
    changed = response.get_json()
    assert changed["labels"] == {"team": "core", "owner": "ops"}
    assert changed["version"] == "1.32.0"


@pytest.mark.parametrize("field, value", [("name", "renamed"), ("platform", "elsewhere")])
def test_patch_of_name_or_platform_is_422(client, inventory, field, value):
    cluster = inventory.cluster()
    assert_problem(client.patch(f"/kubeclusters/{cluster['name']}", json={field: value}),
                   422, f"body.{field}")


def test_patch_of_organization_is_ignored(client, inventory):
    cluster = inventory.cluster()
    other = inventory.org()
    response = client.patch(f"/kubeclusters/{cluster['name']}", json={"organization": other["id"]})
    assert response.status_code == 200
    assert response.get_json()["organization"] == cluster["organization"]


def test_delete_cluster_by_id_removes_it_and_its_scans(client, inventory, store):
    cluster = inventory.cluster()
    inventory.scan(cluster["name"], 1700000000)
    response = client.delete(f"/kubeclusters/{cluster['id']}/")
    assert response.status_code == 204 and response.data == b""
    assert_problem(client.get(f"/kubeclusters/{cluster['name']}"), 404)
    assert store.scans.collection.count_documents({}) == 0


@pytest.mark.parametrize("key", ["Upper", "k8scl_not-a-uuid", "a$b", "x" * 5000])
def test_malformed_cluster_in_path_is_422(client, key):
    assert_problem(client.get(f"/kubeclusters/{key}"), 422, "path.cluster")


@pytest.mark.parametrize("endpoint", [
    "https://api.prod.example.com", "https://api.prod.example.com:6443",
    "https://10.0.0.1:6443", "https://[2001:db8::1]:443",
    "https://rancher.example.com/k8s/clusters/c-m-abc123", "https://bücher.example:6443",
    "https://xn--bcher-kva.example", "https://api.example.com/a%3Cb%20c",
    "https://api.example.com/" + "p" * (2048 - len("https://api.example.com/"))])
def test_an_api_server_endpoint_is_kept_and_filterable(client, inventory, endpoint):
    cluster = inventory.cluster(endpoint=endpoint)
    assert cluster["endpoint"] == endpoint
    # an endpoint near 2,048 characters is past a filter's 2,000: found by its prefix
    wanted = endpoint if len(endpoint) < 1000 else endpoint[:1000] + "*"
    found = client.get("/kubeclusters", query_string={"filter": f'endpoint="{wanted}"'})
    assert [c["name"] for c in found.get_json()["results"]] == [cluster["name"]]


@pytest.mark.parametrize("endpoint", [
    "http://api.example.com", "api.example.com:6443", "https://", "https://:6443",
    "https://user:secret@api.example.com", "https://api.example.com/?token=x",
    "https://api.example.com/#x", "https://api.example.com:99999", "https://api.example.com:0",
    "https://api.example.com:port", "https://api example.com", "ftp://api.example.com",
    "https://" + "a" * 600 + ".com", 6443, "",
    # hosts that are neither DNS names of LDH labels (IDNA) nor IP literals
    "https://-a-.com", "https://a-.example.com", "https://a..example.com",
    "https://api.example.com.", "https://a_b.example.com", "https://xn--zz.example",
    "https://1.2.3", "https://256.0.0.1", "https://0x7f000001", "https://api.0x1",
    "https://[fe80::1%25eth0]", "https://[v1.x]",
    "https://%61pi.example.com",
    # paths of characters a URL does not have
    "https://api.example.com/a<b", 'https://api.example.com/"', "https://api.example.com/é",
    "https://api.example.com/%zz",
    "https://api.example.com/" + "p" * (2049 - len("https://api.example.com/"))])
def test_an_endpoint_that_is_not_an_https_api_server_url_is_422(client, inventory, endpoint):
    platform = inventory.platform()
    response = client.post("/kubeclusters", json={
        "name": "c", "platform": platform["name"], "environment": "dev", "version": "1.30",
        "endpoint": endpoint})
    assert_problem(response, 422, "body.endpoint")
    assert client.get("/kubeclusters/c").status_code == 404  # nothing written


def test_the_endpoint_defaults_to_null_changes_and_clears(client, inventory):
    cluster = inventory.cluster()
    assert cluster["endpoint"] is None
    url = "https://api.example.com:6443"
    assert client.patch(f"/kubeclusters/{cluster['name']}",
                        json={"endpoint": url}).get_json()["endpoint"] == url
    assert client.patch(f"/kubeclusters/{cluster['name']}",
                        json={"endpoint": None}).get_json()["endpoint"] is None


def test_a_cluster_stored_before_endpoints_existed_reads_null(client, inventory, store):
    cluster = inventory.cluster()
    store.clusters.collection.update_one({"_id": cluster["name"]}, {"$unset": {"endpoint": ""}})
    assert "endpoint" not in store.clusters.collection.find_one({"_id": cluster["name"]})
    assert client.get(f"/kubeclusters/{cluster['name']}").get_json()["endpoint"] is None
