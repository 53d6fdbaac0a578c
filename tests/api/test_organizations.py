import pytest

from tests.conftest import assert_problem


def test_create_answers_201_with_location_and_server_fields(client):
    response = client.post("/organizations", json={"title": "Acme", "description": "A customer"})
    assert response.status_code == 201
    org = response.get_json()
    assert org["id"].startswith("org_")
    assert response.headers["Location"] == f"http://localhost/organizations/{org['id']}"
    assert org["title"] == "Acme" and org["description"] == "A customer"
    assert org["created_by"] == org["last_modified_by"] == "admin"
    assert org["created_on"].endswith("Z") and org["created_on"] == org["last_modified_on"]
    assert client.get(response.headers["Location"]).get_json() == org


def test_ids_are_uuid7_so_lists_come_in_creation_order(client, inventory):
    made = [inventory.org(title=f"Org {i}")["id"] for i in range(5)]
    listed = [o["id"] for o in client.get("/organizations").get_json()["results"]]
    assert listed == made == sorted(made)
    assert all(i[len("org_") + 14] == "7" for i in made)  # the UUID version digit


def test_read_only_fields_in_a_body_are_ignored(client):
    body = {"title": "Acme", "id": "org_x", "created_by": "mallory",
            "created_on": "2000-01-01T00:00:00Z", "$schema": "http://elsewhere/x.json"}
    org = client.post("/organizations", json=body).get_json()
    assert org["id"] != "org_x" and org["created_by"] == "admin"
    assert org["created_on"] != "2000-01-01T00:00:00Z"


@pytest.mark.parametrize("body, location", [
    ({}, "body.title"),
    ({"title": ""}, "body.title"),
    ({"title": 5}, "body.title"),
    ({"title": "x" * 201}, "body.title"),
    ({"title": "line\nbreak"}, "body.title"),
    ({"title": "Acme", "colour": "red"}, "body.colour"),
    ({"title": "Acme", "description": None}, "body.description"),
])
def test_create_with_bad_body_is_422_at_the_field(client, body, location):
    assert_problem(client.post("/organizations", json=body), 422, location)


def test_patch_changes_only_given_fields_and_records_who(client, inventory):
    org = inventory.org(title="Acme", description="old")
    response = client.patch(f"/organizations/{org['id']}", json={"description": "new"})
    assert response.status_code == 200
    changed = response.get_json()
    assert changed["title"] == "Acme" and changed["description"] == "new"
    assert changed["created_on"] == org["created_on"]
    assert changed["last_modified_on"] >= org["last_modified_on"]


def test_patch_sending_back_what_was_read_is_accepted(client, inventory):
    org = inventory.org()
    response = client.patch(f"/organizations/{org['id']}", json={**org, "title": "New"})
    assert response.status_code == 200 and response.get_json()["title"] == "New"


def test_get_unknown_organization_is_404(client):
    assert_problem(client.get("/organizations/org_00000000-0000-7000-8000-000000000000"), 404)


def test_malformed_organization_id_in_path_is_422(client):
    body = assert_problem(client.get("/organizations/acme"), 422, "path.org")
    assert body["errors"][0]["value"] == "acme"


def test_delete_is_204_with_empty_body(client, inventory):
    org = inventory.org()
    response = client.delete(f"/organizations/{org['id']}")
    assert response.status_code == 204 and response.data == b""
    assert_problem(client.get(f"/organizations/{org['id']}"), 404)


def test_delete_with_platforms_is_409_and_keeps_everything(client, inventory):
    org = inventory.org()
    platform = inventory.platform(org=org["id"])
    assert_problem(client.delete(f"/organizations/{org['id']}"), 409)
    assert client.get(f"/organizations/{org['id']}").status_code == 200
    assert client.get(f"/kubeplatforms/{platform['name']}").status_code == 200


def test_forced_delete_removes_the_whole_subtree(client, inventory, store):
    org = inventory.org()
    platform = inventory.platform(org=org["id"])
    cluster = inventory.cluster(platform=platform["name"])
    inventory.scan(cluster["name"], 1700000000)
    other = inventory.cluster()  # another organization's, untouched
    assert client.delete(f"/organizations/{org['id']}?force=true").status_code == 204
    for path in (f"/organizations/{org['id']}", f"/kubeplatforms/{platform['name']}",
                 f"/kubeclusters/{cluster['name']}"):
        assert client.get(path).status_code == 404
    assert store.scans.collection.count_documents({"cluster": cluster["id"]}) == 0
    assert client.get(f"/kubeclusters/{other['name']}").status_code == 200


@pytest.mark.parametrize("force", ["yes", "1", "TRUE", ""])
def test_delete_with_force_not_true_or_false_is_422(client, inventory, force):
    org = inventory.org()
    assert_problem(client.delete(f"/organizations/{org['id']}?force={force}"), 422, "query.force")
