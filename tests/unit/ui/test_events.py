"""The change feed's console page (`/ui/changes`): its events with each
change's old and new value, and its filter."""
from html import unescape

from tests.api.test_console_access import sign_in
from tests.conftest import ADMIN_TOKEN


def test_the_changes_show_each_events_changes_and_filter(app, client, inventory):
    inventory.cluster(name="changed", title="Old")
    client.patch("/kubeclusters/changed", json={"title": "New"})
    inventory.org(title="Unrelated")
    console = sign_in(app, ADMIN_TOKEN)
    text = unescape(console.get('/ui/changes?filter=subject="/kubeclusters/changed"'
                                "&order_by=occurred_on desc").get_data(as_text=True))
    assert "<title>Changes: subject=\"/kubeclusters/changed\"" in text
    assert "kubecluster.updated" in text and "organization.created" not in text
    assert "<div><code>title</code>: Old → New</div>" in text
    assert text.index("kubecluster.updated") < text.index("kubecluster.created")
