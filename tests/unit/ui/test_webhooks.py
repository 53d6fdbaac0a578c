"""The webhooks' console pages, for admins: the list leading to each
webhook's page, its declared fields, deliveries and Resume."""
from tests.api.test_console_access import sign_in
from tests.conftest import ADMIN_TOKEN


def test_a_webhooks_url_leads_to_its_page(app, client):
    made = client.post("/webhooks", json={"url": "https://hooks.example.com/y"}).get_json()
    console = sign_in(app, ADMIN_TOKEN)
    listed = console.get("/ui/webhooks").get_data(as_text=True)
    assert f'<a href="/ui/webhooks/{made["id"]}">https://hooks.example.com/y</a>' in listed
    assert '<span class="none">all events</span>' in listed  # no filter: every event
    page = console.get(f"/ui/webhooks/{made['id']}").get_data(as_text=True)
    assert "<title>Webhook https://hooks.example.com/y" in page
    assert f"<dt>Id</dt><dd><code>{made['id']}</code></dd>" in page
    assert "Resume deliveries" not in page  # active


def test_an_inactive_webhook_says_so_and_a_bad_query_of_its_deliveries_is_a_422(app, client):
    made = client.post("/webhooks", json={"url": "https://hooks.example.com/z"}).get_json()
    client.patch(f"/webhooks/{made['id']}", json={"active": False})
    console = sign_in(app, ADMIN_TOKEN)
    assert "<strong>inactive</strong>" in console.get("/ui/webhooks").get_data(as_text=True)
    refused = console.get(f"/ui/webhooks/{made['id']}?limit=abc")
    assert refused.status_code == 422 and "<strong>limit</strong>" in refused.get_data(
        as_text=True)
