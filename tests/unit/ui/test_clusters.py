"""The clusters' console pages: labels edited as `key=value` lines, the
declared list and a cluster's page with its own sections."""
import re

import pytest
from marshmallow import ValidationError

from inventory.ui.clusters import CLUSTER_PAGES, labels_patch, labels_text
from tests.api.test_console_access import sign_in
from tests.conftest import ADMIN_TOKEN


def test_labels_read_as_lines_and_a_line_removed_removes_its_label():
    current = {"team": "core", "old": "x"}
    assert labels_text(current) == "old=x\nteam=core"
    assert labels_patch("team = ops\n\nnew=a=b\n", current) == {
        "old": None, "team": "ops", "new": "a=b"}
    with pytest.raises(ValidationError, match="Line 2"):
        labels_patch("a=1\nno equals", current)


def test_the_clusters_pages_are_declared_with_an_export_and_a_record():
    assert CLUSTER_PAGES.endpoints == {"list": "ui.clusters", "record": "ui.cluster",
                                       "csv": "ui.clusters_csv"}
    assert [column.label for column in CLUSTER_PAGES.columns] == [
        "Name", "Environment", "Platform", "Version", "Support", "Readiness", "Last scanned"]


def test_a_clusters_page_is_its_declared_fields_then_its_own_sections(app, inventory):
    inventory.cluster(name="sectioned", labels={"team": "core"})
    text = sign_in(app, ADMIN_TOKEN).get("/ui/clusters/sectioned").get_data(as_text=True)
    headings = re.findall(r'<h2 id="[a-z]+-heading">([^<]+)</h2>', text)
    assert headings == ["Fields", "Labels", "Support", "Upgrade readiness", "Scans", "History"]
    platform = text.split("<dt>Platform</dt>", 1)[1].split("</dd>", 1)[0]
    assert 'href="/ui/clusters?filter=platform%3D%22' in platform  # its platform's clusters


def test_a_bad_query_of_its_scans_is_a_422_beside_them(app, inventory):
    inventory.cluster(name="queried")
    answer = sign_in(app, ADMIN_TOKEN).get("/ui/clusters/queried?order_by=nope")
    assert answer.status_code == 422
    assert "<strong>order_by</strong>" in answer.get_data(as_text=True)
