import pytest

from tests.conftest import assert_problem

PLATFORM = {"control_plane": {"provider": "gke"}, "infrastructure": {"cloud": {"provider": "gcp"}}}


def test_create_platform_answers_201_with_location(client, inventory):
    org = inventory.org()
    response = client.post("/kubeplatforms", json={"name": "gke-eu", "organization": org["id"],
                                                   "title": "GKE Europe", **PLATFORM})
    assert response.status_code == 201
    assert response.headers["Location"] == "http://localhost/kubeplatforms/gke-eu"
    platform = response.get_json()
    assert platform["control_plane"] == {"provider": "gke"}
    assert platform["infrastructure"] == {"cloud": {"provider": "gcp"}}
    assert platform["organization"] == org["id"]


@pytest.mark.parametrize("name", ["Upper", "under_score", "-leading", "trailing-", "", "a" * 64,
                                  "dot.ted", "sp ace", "k8scl_x", 5])
def test_name_that_is_not_an_rfc1123_label_is_422(client, inventory, name):
    org = inventory.org()
    response = client.post("/kubeplatforms", json={"name": name, "organization": org["id"], **PLATFORM})
    assert_problem(response, 422, "body.name")


@pytest.mark.parametrize("name", ["a", "0", "a" * 63, "eks-prod-1"])
def test_name_that_is_an_rfc1123_label_is_accepted(inventory, name):
    assert inventory.platform(name=name)["name"] == name


def test_duplicate_name_is_409(client, inventory):
    platform = inventory.platform(name="twice")
    response = client.post("/kubeplatforms", json={"name": "twice", **PLATFORM,
                                                   "organization": platform["organization"]})
    assert_problem(response, 409)


def test_unknown_organization_is_422(client):
    response = client.post("/kubeplatforms", json={
        "name": "p", "organization": "org_00000000-0000-7000-8000-000000000000", **PLATFORM})
    body = assert_problem(response, 422, "body.organization")
    assert body["errors"][0]["value"] == "org_00000000-0000-7000-8000-000000000000"


def test_missing_nested_provider_is_422_at_its_dotted_location(client, inventory):
    org = inventory.org()
    response = client.post("/kubeplatforms", json={
        "name": "p", "organization": org["id"], "control_plane": {},
        "infrastructure": {"cloud": {"provider": "aws", "region": "x"}}})
    body = assert_problem(response, 422)
    locations = {e["location"] for e in body["errors"]}
    assert locations == {"body.control_plane.provider", "body.infrastructure.cloud.region"}


def test_patch_merges_nested_objects(client, inventory):
    platform = inventory.platform(title="Old")
    response = client.patch(f"/kubeplatforms/{platform['name']}",
                            json={"infrastructure": {"cloud": {"provider": "on-prem"}}})
    assert response.status_code == 200
    changed = response.get_json()
    assert changed["infrastructure"] == {"cloud": {"provider": "on-prem"}}
    assert changed["control_plane"] == platform["control_plane"]
    assert changed["title"] == "Old"


def test_control_plane_provider_cannot_change_and_nothing_is_written(client, inventory):
    """Its clusters keep a copy of it (their lifecycle, summaries): README Decisions."""
    platform = inventory.platform(title="Old")
    response = client.patch(f"/kubeplatforms/{platform['name']}", json={
        "title": "New", "control_plane": {"provider": "eks-anywhere"}})
    body = assert_problem(response, 422, "body.control_plane.provider")
    assert "cannot be changed" in body["errors"][0]["message"]
    assert client.get(f"/kubeplatforms/{platform['name']}").get_json()["title"] == "Old"
    # the same value is accepted, as for every field that cannot change
    response = client.patch(f"/kubeplatforms/{platform['name']}", json={
        "title": "New", "control_plane": {"provider": "eks"}})
    assert response.status_code == 200 and response.get_json()["title"] == "New"


@pytest.mark.parametrize("field, value", [("name", "renamed"),
                                          ("organization", "org_00000000-0000-7000-8000-000000000000")])
def test_patch_of_name_or_organization_is_422_and_changes_nothing(client, inventory, field, value):
    platform = inventory.platform()
    response = client.patch(f"/kubeplatforms/{platform['name']}", json={field: value, "title": "T"})
    assert_problem(response, 422, f"body.{field}")
    assert client.get(f"/kubeplatforms/{platform['name']}").get_json()["title"] == platform["title"]


def test_patch_with_the_unchanged_name_is_accepted(client, inventory):
    platform = inventory.platform()
    response = client.patch(f"/kubeplatforms/{platform['name']}",
                            json={"name": platform["name"], "title": "T"})
    assert response.status_code == 200 and response.get_json()["title"] == "T"


def test_delete_platform_is_204_with_empty_body(client, inventory):
    platform = inventory.platform()
    response = client.delete(f"/kubeplatforms/{platform['name']}/")
    assert response.status_code == 204 and response.data == b""
    assert "Content-Type" not in response.headers
    assert_problem(client.get(f"/kubeplatforms/{platform['name']}"), 404)


def test_delete_platform_with_clusters_is_409_unless_forced(client, inventory):
    platform = inventory.platform()
    cluster = inventory.cluster(platform=platform["name"])
    assert_problem(client.delete(f"/kubeplatforms/{platform['name']}/"), 409)
    assert client.get(f"/kubeclusters/{cluster['name']}").status_code == 200
    assert client.delete(f"/kubeplatforms/{platform['name']}/?force=true").status_code == 204
    assert client.get(f"/kubeclusters/{cluster['name']}").status_code == 404


def test_delete_unknown_platform_is_404(client):
    assert_problem(client.delete("/kubeplatforms/nothing-here/"), 404)


def test_malformed_platform_in_path_is_422(client):
    assert_problem(client.get("/kubeplatforms/Not_A_Slug"), 422, "path.platform")
