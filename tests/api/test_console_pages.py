"""The console's pages: lists with the API's query parameters, a cluster's
page and its conditional edit, the overview, and tokens and webhooks for
admins. Nothing a user can type answers a 500."""
import json
import random
import re
import string
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest

from tests.api.test_console_access import form_token, new_token, sign_in
from tests.conftest import ADMIN_TOKEN

ROW_NAMES = re.compile(r'<th scope="row"><a href="/ui/clusters/([^"]+)">')


@pytest.fixture
def console(app):
    return sign_in(app, ADMIN_TOKEN)


def links(text, label):
    return [unescape(href) for href in re.findall(rf'<a href="([^"]+)"[^>]*>{label}</a>', text)]


def test_the_clusters_table_filters_sorts_and_pages_to_the_end(console, inventory):
    platform = inventory.platform()["name"]
    for number in range(7):
        inventory.cluster(platform, name=f"c{number}",
                          environment="production" if number % 2 else "staging",
                          version=f"1.{25 + number}.0")
    page = console.get('/ui/clusters?filter=environment="production"&limit=2&order_by=version desc')
    text = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "<title>Clusters: environment=&#34;production&#34; · Cluster inventory</title>" in text
    assert 'value="environment=&#34;production&#34;"' in text  # the filter stays in its field
    seen = ROW_NAMES.findall(text)
    while links(text, "Next"):
        (following,) = links(text, "Next")
        query = parse_qs(urlsplit(following).query)
        assert query["filter"] == ['environment="production"'] and query["limit"] == ["2"]
        text = console.get(following).get_data(as_text=True)
        seen += ROW_NAMES.findall(text)
        assert links(text, "First")
    assert seen == ["c5", "c3", "c1"] or seen == ["c5", "c3", "c1"][:len(seen)]
    assert seen == ["c5", "c3", "c1"]
    assert "End of the list" in text


def test_a_continue_token_of_the_console_is_the_apis(console, client, inventory):
    platform = inventory.platform()["name"]
    for number in range(3):
        inventory.cluster(platform, name=f"k{number}")
    text = console.get("/ui/clusters?limit=1").get_data(as_text=True)
    token = parse_qs(urlsplit(links(text, "Next")[0]).query)["continue"][0]
    api = client.get(f"/kubeclusters?limit=1&continue={token}").get_json()
    assert [c["name"] for c in api["results"]] == ["k1"]


def test_sortable_columns_link_their_order_and_its_reverse(console, inventory):
    inventory.cluster(name="one")
    text = console.get("/ui/clusters?order_by=version").get_data(as_text=True)
    assert 'aria-sort="ascending"' in text
    assert "/ui/clusters?order_by=version+desc" in text
    assert "/ui/clusters?order_by=name" in text


@pytest.mark.parametrize("query, field, words", [
    ("filter=environment%3D", "filter", "value"),
    ("filter=nope%3D%221%22", "filter", "nope"),
    ("order_by=platform", "order_by", "cannot be ordered by"),
    ("limit=101", "limit", "100"),
    ("limit=abc", "limit", ""),
    ("continue=forged", "continue", "continuation token"),
    ("filter=a&filter=b", "filter", "more than once"),
    ("colour=blue", "colour", "Unknown"),
])
def test_a_bad_query_shows_its_error_beside_its_field(console, query, field, words):
    response = console.get(f"/ui/clusters?{query}")
    assert response.status_code == 422
    text = unescape(response.get_data(as_text=True))
    if field == "filter":
        assert re.search(r'<p class="error" id="filter-error" role="alert">[^<]*' + words, text)
        assert 'aria-invalid="true"' in text
    else:
        assert f"<strong>{field}</strong>: " in text and words in text
    assert "<table" not in text.split("<main", 1)[1]


def test_a_foreign_continue_token_is_refused(console, client, inventory):
    platform = inventory.platform()["name"]
    for number in range(2):
        inventory.cluster(platform, name=f"f{number}")
    token = client.get("/kubeplatforms?limit=1").get_json()["pagination"]["continue"] or \
        client.get("/kubeclusters?limit=1").get_json()["pagination"]["continue"]
    response = console.get(f"/ui/clusters?limit=1&filter=name%3D%22f1%22&continue={token}")
    assert response.status_code == 422


def test_nothing_typed_into_a_page_answers_a_500(console, inventory):
    inventory.cluster(name="fuzzed")
    rng = random.Random(36)
    alphabet = string.printable + "\u00e9\u2028\ufffd\U0001f600\x00"
    paths = ["/ui/", "/ui/clusters", "/ui/platforms", "/ui/organizations", "/ui/changes",
             "/ui/tokens", "/ui/webhooks", "/ui/clusters/fuzzed", "/ui/sign-in"]
    names = ["filter", "order_by", "limit", "continue", "next", "x", "filter[]", ""]
    for _ in range(300):
        path = rng.choice(paths)
        params = [(rng.choice(names), "".join(rng.choice(alphabet)
                                               for _ in range(rng.randint(0, 40))))
                  for _ in range(rng.randint(0, 3))]
        response = console.get(path, query_string=params)
        assert response.status_code < 500, (path, params, response.status_code)
    for junk in ("/ui/clusters/" + "a" * 3000, "/ui/clusters/%00", "/ui/webhooks/..%2f",
                 "/ui/tokens/x/revoke", "/ui/clusters/fuzzed/edit/more"):
        assert console.get(junk).status_code < 500, junk


def test_a_clusters_page_shows_its_fields_labels_scans_and_history(console, client, inventory):
    inventory.cluster(name="shown", labels={"team": "core"}, endpoint="https://api.shown.example:6443")
    inventory.scan("shown", 1763800000)
    client.patch("/kubeclusters/shown", json={"version": "1.32.0"})
    response = console.get("/ui/clusters/shown")
    text = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "<title>Cluster shown · Cluster inventory</title>" in text
    for heading in ("Fields", "Labels", "Support", "Upgrade readiness", "Scans", "History"):
        assert f">{heading}</h2>" in text
    assert "https://api.shown.example:6443" in text and "<code>team</code>" in text
    assert '<time datetime="2025-11-22T08:26:40Z">2025-11-22 08:26 UTC</time>' in text
    # never observed: every check unknown, for the next minor after the recorded version
    assert 'To 1.33: <span class="status unknown">unknown</span>' in text
    history = text.split('id="history-heading"', 1)[1]
    assert history.index("kubecluster.updated") < history.index("kubecluster.created")
    assert "<code>version</code>: <del>1.31.2</del> → <ins>1.32.0</ins>" in history


def _edit_form(console, name):
    text = console.get(f"/ui/clusters/{name}/edit").get_data(as_text=True)
    return {"form_token": form_token(console, f"/ui/clusters/{name}/edit"),
            "revision": re.search(r'name="revision" value="([^"]+)"', text).group(1),
            "environment": "production", "version": "1.31.2", "title": "",
            "description": "", "endpoint": "", "labels": "team=core"}


def test_a_writer_edits_a_cluster(app, client, inventory):
    inventory.cluster(name="edited", labels={"team": "core", "old": "x"})
    writer = sign_in(app, new_token(client, "writer")["token"])
    form = {**_edit_form(writer, "edited"), "title": "Edited", "labels": "team=ops\nnew=1"}
    response = writer.post("/ui/clusters/edited/edit", data=form)
    assert response.status_code == 303 and response.headers["Location"] == "/ui/clusters/edited"
    record = client.get("/kubeclusters/edited").get_json()
    assert record["title"] == "Edited" and record["labels"] == {"team": "ops", "new": "1"}
    assert record["last_modified_by"] == "t-writer"


def test_a_conflicting_edit_is_shown_never_overwritten(app, client, inventory):
    inventory.cluster(name="raced")
    writer = sign_in(app, new_token(client, "writer")["token"])
    form = {**_edit_form(writer, "raced"), "title": "mine"}
    client.patch("/kubeclusters/raced", json={"title": "theirs"})
    response = writer.post("/ui/clusters/raced/edit", data=form)
    assert response.status_code == 412
    text = unescape(response.get_data(as_text=True))
    assert "This cluster changed while you edited it" in text
    assert "theirs" in text and 'value="mine"' in text
    assert client.get("/kubeclusters/raced").get_json()["title"] == "theirs"
    # saving again, having seen theirs, puts mine over it
    again = {**form, "revision": re.search(r'name="revision" value="([^"]+)"', text).group(1)}
    assert writer.post("/ui/clusters/raced/edit", data=again).status_code == 303
    assert client.get("/kubeclusters/raced").get_json()["title"] == "mine"


def test_a_bad_edit_shows_its_errors_beside_the_fields(console, client, inventory):
    inventory.cluster(name="checked")
    form = {**_edit_form(console, "checked"), "version": "one", "endpoint": "ftp://x",
            "labels": "no equals sign"}
    response = console.post("/ui/clusters/checked/edit", data=form)
    assert response.status_code == 422
    text = response.get_data(as_text=True)
    assert 'id="labels-error"' in text
    form["labels"] = ""
    text = console.post("/ui/clusters/checked/edit", data=form).get_data(as_text=True)
    assert 'id="version-error"' in text and 'id="endpoint-error"' in text
    assert client.get("/kubeclusters/checked").get_json()["version"] == "1.31.2"


def test_the_overview_summarises_the_fleet(console, inventory):
    platform = inventory.platform()["name"]
    inventory.cluster(platform, name="old-one", version="1.20.0")
    inventory.cluster(platform, name="new-one", version="1.31.2", environment="staging")
    inventory.scan("new-one", 1763800000)
    response = console.get("/ui/")
    text = unescape(response.get_data(as_text=True))
    assert response.status_code == 200
    assert "<title>Fleet overview · Cluster inventory</title>" in text
    assert "2 clusters," in text
    assert 'href="/ui/clusters?filter=environment="production" AND support.status="unsupported"' \
        in text.replace("%3D", "=").replace("%22", '"').replace("+", " ")
    unscanned = text.split('id="unscanned-heading"', 1)[1].split("</section>", 1)[0]
    assert unscanned.index("old-one") < unscanned.index("new-one")
    changes = text.split('id="changes-heading"', 1)[1]
    assert "kubecluster.created" in changes and 'data-after="evt_' in changes
    # no scan has observed them yet
    assert chart(text, "readiness-chart") == [("unknown", 'readiness.status="unknown"', 2)]


def chart(text, chart_id):
    """[(label, the filter its link asks for, count)] of the overview's chart
    `chart_id`: its numbers as the page's text, not only bars."""
    table = text.split(f'<caption id="{chart_id}">', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<th scope="row"><a href="([^"]+)">([^<]+)</a></th>\s*<td><span '
                      r'class="bar-row"><span class="count">(\d+)</span>', table)
    return [(label, parse_qs(urlsplit(unescape(href)).query)["filter"][0], int(count))
            for href, label, count in rows]


def test_every_count_of_the_overview_leads_to_its_clusters(console, inventory):
    platform = inventory.platform()["name"]
    for version, environment in (("1.20.0", "production"), ("1.31.2", "production"),
                                 ("1.31.2", "staging")):
        inventory.cluster(platform, version=version, environment=environment)
    text = console.get("/ui/").get_data(as_text=True)
    table = text.split('id="support-heading"', 1)[1].split("</table>", 1)[0]
    counted = re.findall(r'<a href="([^"]+)" aria-label="(\d+) ', table)
    assert counted
    for href, count in counted:
        listed = console.get(unescape(href)).get_data(as_text=True)
        assert len(ROW_NAMES.findall(listed)) == int(count)


def test_an_admin_makes_a_token_seen_once_and_revokes_it(console, client):
    response = console.post("/ui/tokens", data={"form_token": form_token(console),
                                                "name": "ci", "role": "writer"})
    assert response.status_code == 201
    assert response.headers["Cache-Control"] == "no-store"
    text = response.get_data(as_text=True)
    secret = re.search(r'id="new-token" type="text" readonly value="(inv_[^"]+)"', text).group(1)
    api = client.get("/tokens").get_json()["results"]
    (made,) = [token for token in api if token["name"] == "ci"]
    assert secret not in console.get("/ui/tokens").get_data(as_text=True)
    bad = console.post("/ui/tokens", data={"form_token": form_token(console), "name": "",
                                           "role": "boss"})
    assert bad.status_code == 422 and 'id="name-error"' in bad.get_data(as_text=True)
    revoked = console.post(f"/ui/tokens/{made['id']}/revoke",
                           data={"form_token": form_token(console)})
    assert revoked.status_code == 303
    assert all(token["name"] != "ci" for token in client.get("/tokens").get_json()["results"])


def test_an_admin_sees_webhooks_and_their_deliveries(console, client, store):
    made = client.post("/webhooks", json={"url": "https://hooks.example.com/x"}).get_json()
    listed = console.get("/ui/webhooks").get_data(as_text=True)
    assert "https://hooks.example.com/x" in listed
    page = console.get(f"/ui/webhooks/{made['id']}")
    assert page.status_code == 200 and "Deliveries, newest first" in page.get_data(as_text=True)
    client.patch(f"/webhooks/{made['id']}", json={"active": False})
    text = console.get(f"/ui/webhooks/{made['id']}").get_data(as_text=True)
    assert "Resume deliveries" in text
    resumed = console.post(f"/ui/webhooks/{made['id']}/resume",
                           data={"form_token": form_token(console)})
    assert resumed.status_code == 303
    assert client.get(f"/webhooks/{made['id']}").get_json()["active"] is True


def test_the_overview_counts_again_after_a_while(console, inventory, monkeypatch):
    from inventory.ui import views
    inventory.cluster(name="first")
    assert "1 cluster," in console.get("/ui/").get_data(as_text=True)
    inventory.cluster(name="second")
    assert "1 cluster," in console.get("/ui/").get_data(as_text=True)  # kept a moment
    monkeypatch.setattr(views, "COUNTS_SECONDS", 0)
    assert "2 clusters," in console.get("/ui/").get_data(as_text=True)


def test_nothing_typed_into_a_form_answers_a_500(console, inventory):
    inventory.cluster(name="formed")
    rng = random.Random(3636)
    alphabet = string.printable + "\u00e9\u2028\U0001f600\x00"
    token = form_token(console)
    fields = ["environment", "version", "title", "description", "endpoint", "labels",
              "revision", "name", "role", "organization", "token", "next"]
    for _ in range(120):
        path = rng.choice(["/ui/clusters/formed/edit", "/ui/tokens", "/ui/sign-in"])
        data = {name: "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
                for name in rng.sample(fields, rng.randint(0, len(fields)))}
        data["form_token"] = token
        response = console.post(path, data=data)
        assert response.status_code < 500, (path, data, response.status_code)
        if path == "/ui/sign-in":  # a new sign-in form, and the session's form token again
            token = form_token(console)


def test_export_csv_streams_the_whole_match_as_the_api_does(console, client, inventory):
    platform = inventory.platform()["name"]
    for number in range(25):  # more than a page
        inventory.cluster(platform, name=f"e{number:02}", labels={"team": f"t{number % 3}"},
                          environment="production" if number % 5 else "staging")
    page = console.get('/ui/clusters?filter=environment="production"&order_by=name desc&limit=5')
    (export,) = links(page.get_data(as_text=True), "Export CSV")
    assert parse_qs(urlsplit(export).query) == {"filter": ['environment="production"'],
                                                 "order_by": ["name desc"]}
    answer = console.get(export)
    assert answer.status_code == 200 and answer.mimetype == "text/csv"
    assert 'filename="kubeclusters.csv"' in answer.headers["Content-Disposition"]
    api = client.get('/kubeclusters?format=csv&filter=environment="production"'
                     '&order_by=name desc')
    assert answer.get_data() == api.get_data()  # the API's own export, row for row
    rows = answer.get_data(as_text=True).splitlines()
    assert rows[0].startswith("id,name,platform") and "labels.team" in rows[0]
    assert len(rows) == 1 + 20 and rows[1].split(",")[1] == "e24"


def test_export_csv_keeps_the_scope_and_the_bounds(app, console, client, inventory,
                                                   monkeypatch):
    acme, other = inventory.org("Acme"), inventory.org("Other")
    inventory.cluster(inventory.platform(acme["id"])["name"], name="mine")
    inventory.cluster(inventory.platform(other["id"])["name"], name="theirs")
    scoped = sign_in(app, new_token(client, "reader", acme["id"])["token"])
    text = scoped.get("/ui/clusters.csv").get_data(as_text=True)
    assert "mine" in text and "theirs" not in text
    bad = console.get("/ui/clusters.csv?filter=nope%3D1")
    assert bad.status_code == 422 and bad.mimetype == "text/html"
    assert console.get("/ui/clusters.csv?limit=abc").status_code == 422
    for path in ("/ui/platforms.csv", "/ui/organizations.csv"):
        assert console.get(path).mimetype == "text/csv"
    import inventory.http.csv_export as csv_export
    monkeypatch.setattr(csv_export, "MAX_CSV_ROWS", 1)
    refused = console.get("/ui/clusters.csv")
    assert refused.status_code == 422 and "narrow the filter" in refused.get_data(as_text=True)
    assert app.test_client().get("/ui/clusters.csv").status_code == 303  # signed out


def test_a_clusters_readiness_shows_where_its_place_is(console, store, inventory):
    """A cluster's readiness shows its status and checks (their summaries
    escaped), as the store keeps them: the target and status as fields, the
    checks as JSON."""
    inventory.cluster(name="ready")
    store.clusters.collection.update_one({"_id": "ready"}, {"$set": {
        "readiness": {"target": "1.32", "status": "error"},
        "_checks": json.dumps([{"id": "deprecated-apis", "status": "error",
                                "summary": "<b>2</b> removed APIs", "details": []}])}})
    text = console.get("/ui/clusters/ready").get_data(as_text=True)
    assert "To 1.32" in text and "deprecated-apis" in text and "&lt;b&gt;2&lt;/b&gt;" in text
    listed = console.get("/ui/clusters").get_data(as_text=True)
    assert ">error<" in listed


def test_the_overview_lists_the_most_common_upgrade_blockers(console, client, inventory):
    """The overview's blockers are the API's `:blockers`, most clusters first."""
    from tests.api.test_observations import SCAN, post_scan

    platform = inventory.platform()["name"]
    for name in ("b1", "b2"):  # 1.31 -> target 1.32: flowschemas v1beta3 removed in it
        inventory.cluster(platform, name=name, version="1.30.4")
        post_scan(client, name, 1763800000, **SCAN)
    api = client.get("/kubeclusters:blockers").get_json()["blockers"]
    assert api, "the scan's deprecated API blocks the upgrade"
    text = unescape(console.get("/ui/").get_data(as_text=True))
    section = text.split('id="blockers-heading"')[1].split("</table>")[0]
    rows = re.findall(r'<th scope="row">([^<]+) <span class="status (\w+)">', section)
    assert rows == [(b["check"], b["status"]) for b in api][:len(rows)] and rows
    assert f'<td class="clusters">{api[0]["clusters"]}</td>' in section


# Trust at the edges (issue 43): names not ids, every readiness detail,
# a scan's observations, the overview's charts.

def _visible(html):
    """A page's text as a reader sees it: no tags, no attributes (an id in a
    link's href is not shown)."""
    return unescape(re.sub(r"<[^>]+>", " ", html))


def test_pages_name_an_organization_by_its_title_not_its_id(app, console, client, inventory):
    org = inventory.org(title="Acme Payments")
    platform = inventory.platform(org["id"], name="acme-eks")["name"]
    inventory.cluster(platform, name="named")
    scoped = sign_in(app, new_token(client, "reader", org["id"])["token"])
    for signed_in, path in ((console, "/ui/clusters/named"), (console, "/ui/platforms"),
                            (scoped, "/ui/"), (scoped, "/ui/clusters/named")):
        text = signed_in.get(path).get_data(as_text=True)
        if path == "/ui/":  # its header and count (its feed shows subjects, the API's paths)
            text = text.split('id="support-heading"', 1)[0]
        shown = _visible(text)
        assert "Acme Payments" in shown, path
        assert org["id"] not in shown, path
    field = console.get("/ui/clusters/named").get_data(as_text=True).split(
        "<dt>Organization</dt>", 1)[1].split("</dd>", 1)[0]
    link = re.search(r'href="([^"]+)">Acme Payments</a>', field).group(1)
    listed = console.get(unescape(link)).get_data(as_text=True)  # its clusters
    assert ROW_NAMES.findall(listed) == ["named"]


def test_every_readiness_detail_can_be_disclosed(console, client, inventory):
    """The check's summary names three APIs and `...`; the page discloses all."""
    from tests.api.test_observations import SCAN, post_scan

    apis = [{"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3",
             "resource": resource, "removed_release": "1.32", "requests": 100 - n}
            for n, resource in enumerate(("flowschemas", "prioritylevelconfigurations"))] + [
        {"group": "example.com", "version": "v1beta1", "resource": f"widgets{n}",
         "removed_release": "1.32", "requests": 10 - n} for n in range(3)]
    inventory.cluster(name="blocked", version="1.31.2")
    post_scan(client, "blocked", 1763800000, **{**SCAN, "server": {"git_version": "v1.31.2"},
                                                "deprecated_api_requests": apis})
    check = next(c for c in client.get("/kubeclusters/blocked").get_json()["readiness"]["checks"]
                 if c["id"] == "deprecated-apis")
    assert check["status"] == "error" and ", ..." in check["summary"]
    assert "widgets2" not in check["summary"]  # the summary names three of five
    text = console.get("/ui/clusters/blocked").get_data(as_text=True)
    readiness = text.split('id="readiness-heading"', 1)[1].split("</section>", 1)[0]
    disclosed = re.search(r"<details><summary><strong>deprecated-apis</strong>(.*?)</details>",
                          readiness, re.S)
    assert disclosed, readiness
    for api in apis:
        assert f"{api['group']}/{api['version']} {api['resource']}</code>, removed in 1.32: " \
               f"{api['requests']} requests" in disclosed.group(1)


def test_a_scans_observations_are_shown_newest_first(console, client, inventory):
    from tests.api.test_observations import SCAN, post_scan

    inventory.cluster(name="observed", version="1.30.4")
    inventory.scan("observed", 1763700000)  # an older scan that observed nothing
    post_scan(client, "observed", 1763800000)
    text = console.get("/ui/clusters/observed").get_data(as_text=True)
    scans = text.split('id="scans-heading"', 1)[1].split("</section>", 1)[0]
    rows = scans.split("<tbody>", 1)[1].split("</tr>")
    assert "2025-11-22 08:26" in rows[0] and "2025-11-21 04:40" in rows[1]  # newest first
    newest = rows[0]
    assert "<details><summary>Observations" in newest
    for shown in ("v1.30.4-eks-a737599", "<code>v1.26.15-eks-a737599</code>: 1",
                  "<code>containerd://1.7.11</code>: 12", "<code>Amazon Linux 2</code>: 12",
                  "<code>flowcontrol.apiserver.k8s.io/v1beta3 flowschemas</code>, removed in "
                  "1.32: 120 requests", "<code>v1 componentstatuses</code>, deprecated: 4",
                  "<code>autoscaling/v2beta2 HorizontalPodAutoscaler</code> shop/web",
                  "inventory-agent 1.0.0"):
        assert shown in newest, shown
    assert "none kept" in rows[1] or "Observations" not in rows[1]
    assert SCAN["server"]["git_version"] not in rows[1]


def test_the_overview_charts_versions_and_readiness_with_their_numbers(console, client,
                                                                        inventory):
    from tests.api.test_observations import SCAN, post_scan

    platform = inventory.platform()["name"]
    for n, version in enumerate(("1.29.1", "1.30.4", "1.30.6", "1.31.2")):
        inventory.cluster(platform, name=f"c{n}", version=version)
    post_scan(client, "c1", 1763800000)  # a removed API's clients: blocked
    post_scan(client, "c2", 1763800000, **{**SCAN, "server": {"git_version": "v1.30.6"},
                                           "nodes": {**SCAN["nodes"], "kubelet_versions": {
                                               "v1.30.6": 12}},
                                           "deprecated_api_requests": [], "findings": []})
    text = console.get("/ui/").get_data(as_text=True)
    versions = chart(text, "versions-chart")
    assert [(label, count) for label, _, count in versions] == [
        ("1.29", 1), ("1.30", 2), ("1.31", 1)]
    readiness = chart(text, "readiness-chart")
    api = {g["key"]["readiness.status"]: g["count"] for g in client.get(
        "/kubeclusters:summary?group_by=readiness.status").get_json()["groups"]}
    assert {label: count for label, _, count in readiness} == api
    assert set(api) == {"error", "passing", "unknown"}
    for label, filter_text, count in versions + readiness + chart(text, "support-chart"):
        listed = console.get("/ui/clusters", query_string={"filter": filter_text})
        assert len(ROW_NAMES.findall(listed.get_data(as_text=True))) == count, label
    # the bars are drawn beside the numbers, never instead of them: each as
    # long as its share of the largest, in twentieths
    table = text.split('<caption id="versions-chart">', 1)[1].split("</table>", 1)[0]
    assert re.findall(r'class="fill plain (w\d+)"', table) == ["w10", "w20", "w10"]
