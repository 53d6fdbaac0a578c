"""The organizations' console page: each by its title, leading to its
clusters, its id beside it."""
from html import unescape

from tests.api.test_console_access import sign_in
from tests.conftest import ADMIN_TOKEN


def test_an_organizations_title_leads_to_its_clusters(app, inventory):
    acme = inventory.org(title="Acme")
    inventory.cluster(inventory.platform(acme["id"])["name"], name="acme-one")
    inventory.cluster(name="not-acme")
    console = sign_in(app, ADMIN_TOKEN)
    text = unescape(console.get("/ui/organizations?filter=title%3D%22Acme%22")
                    .get_data(as_text=True))
    assert f"<td><code>{acme['id']}</code></td>" in text
    link = text.split(">Acme</a>", 1)[0].rsplit('href="', 1)[1].split('"', 1)[0]
    listed = console.get(link).get_data(as_text=True)
    assert "acme-one" in listed and "not-acme" not in listed
