"""The console's rollouts: the list and each rollout's page (made from the
rollouts' declaration, inventory/ui/declared.py): stages in order with
their bars and numbers as text, the soak left, the blocked clusters with
their blocking checks, and Approve on a held stage for writers only,
behind the session's form token."""
from html import unescape

from tests.api.test_console_access import form_token, new_token, sign_in
from tests.api.test_rollouts import scan


def _rollout(client, inventory, soak="P1D"):
    org = inventory.org()["id"]
    platform = inventory.platform(org=org)["name"]
    inventory.cluster(platform=platform, name="done-1", version="1.32.0",
                      labels={"wave": "canary"})
    inventory.cluster(platform=platform, name="blocked-1", version="1.31.2")
    scan(client, "blocked-1", "1.31.2", "error")
    inventory.cluster(platform=platform, name="behind-1", version="1.30.2")
    response = client.post("/rollouts", json={
        "name": "wave", "title": "To 1.32", "target": "1.32", "organization": org, "stages": [
            {"name": "canary", "filter": 'labels.wave="canary"', "soak": soak},
            {"name": "rest", "filter": "", "approval": True}]})
    assert response.status_code == 201
    return org


def test_the_list_shows_each_rollout_with_its_stages(app, client, inventory):
    _rollout(client, inventory)
    console = sign_in(app, new_token(client, "reader")["token"])
    text = unescape(console.get("/ui/rollouts").get_data(as_text=True))
    assert 'href="/ui/rollouts/wave"' in text
    assert "To 1.32" in text and "canary soaking, rest waiting" in text
    assert 'href="/ui/rollouts"' in console.get("/ui/").get_data(as_text=True)  # in the nav


def test_a_rollouts_page_shows_its_stages_bars_soak_and_blocked_clusters(app, client, inventory):
    _rollout(client, inventory)
    console = sign_in(app, new_token(client, "reader")["token"])
    text = unescape(console.get("/ui/rollouts/wave").get_data(as_text=True))
    assert text.index("canary") < text.index("rest")
    assert "1 clusters: 1 done, 0 ready, 0 blocked, 0 behind" in text
    assert "2 clusters: 0 done, 0 ready, 1 blocked, 1 behind" in text
    assert "Soak ends" in text and "in 23 hours" in text
    blocked = text[text.index("Blocked clusters"):]
    assert "blocked-1" in blocked and "deprecated-apis" in blocked
    assert "behind-1" not in blocked
    assert "Approve" not in text  # no stage is held yet


def test_a_writer_approves_a_held_stage_and_a_reader_cannot(app, client, inventory, store):
    org = _rollout(client, inventory, soak="PT0S")
    reader = sign_in(app, new_token(client, "reader", org)["token"])
    page = reader.get("/ui/rollouts/wave").get_data(as_text=True)
    assert "Approve rest" not in page and "waiting for a writer" in page
    assert reader.post("/ui/rollouts/wave/approve", data={
        "stage": "rest", "form_token": form_token(reader)}).status_code == 403
    writer = sign_in(app, new_token(client, "writer", org)["token"])
    page = writer.get("/ui/rollouts/wave").get_data(as_text=True)
    assert "Approve rest" in page
    assert writer.post("/ui/rollouts/wave/approve",
                       data={"stage": "rest"}).status_code == 403  # no form token
    assert client.get("/rollouts/wave").get_json()["status"]["stages"][1]["state"] == "held"
    response = writer.post("/ui/rollouts/wave/approve", data={
        "stage": "rest", "form_token": form_token(writer)})
    assert response.status_code == 303
    assert client.get("/rollouts/wave").get_json()["status"]["stages"][1]["state"] == "open"
    again = writer.post("/ui/rollouts/wave/approve", data={
        "stage": "rest", "form_token": form_token(writer)})
    assert again.status_code == 409


def test_a_scoped_caller_sees_no_other_organizations_rollout(app, client, inventory):
    _rollout(client, inventory)
    other = inventory.org(title="Other")["id"]
    console = sign_in(app, new_token(client, "reader", other)["token"])
    assert console.get("/ui/rollouts/wave").status_code == 404
    assert "/ui/rollouts/wave" not in console.get("/ui/rollouts").get_data(as_text=True)
