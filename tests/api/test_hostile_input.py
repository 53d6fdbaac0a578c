"""Hostile input the service once let through: each is a clean 4xx in the
error format, stores nothing, and is never a 500."""
import json

import pytest

from inventory.core import filtering
from inventory.http.problems import MAX_ENTRIES
from inventory.store import pages
from tests.conftest import assert_problem, client_with, walk

SURROGATE = '"\\ud800"'  # as a client escapes it in JSON text


@pytest.mark.parametrize("path, template", [
    ("/organizations", '{"title": %s}'),
    ("/organizations", '{"title": "ok", "description": %s}'),
    ("/kubeplatforms", '{"name": "p", "organization": "org_x", "title": %s}'),
    ("/kubeclusters", '{"name": "c", "platform": "p", "environment": %s, "version": "1.30"}'),
    ("/kubeclusters", '{"name": "c", "platform": "p", "environment": "e", "version": "1.30", '
                      '"labels": {"team": %s}}'),
    ("/kubeclusters", '{"name": "c", "platform": "p", "environment": "e", "version": "1.30", '
                      '"labels": {%s: "x"}}'),
    ("/tokens", '{"name": %s, "role": "reader"}'),
])
def test_a_lone_surrogate_in_any_string_is_400_and_stores_nothing(client, path, template):
    response = client.post(path, data=template % SURROGATE, content_type="application/json")
    body = assert_problem(response, 400, "body")
    assert "surrogate" in body["detail"]
    assert client.get(path).get_json()["results"] == []


def test_a_surrogate_pair_is_one_character_and_fine(client):
    response = client.post("/organizations", data='{"title": "\\ud83d\\ude00"}',
                           content_type="application/json")
    assert response.status_code == 201 and response.get_json()["title"] == "\U0001F600"


def test_a_lone_surrogate_in_a_patch_is_400_and_changes_nothing(client, inventory):
    org = inventory.org(title="Kept")
    response = client.patch(f"/organizations/{org['id']}", data='{"title": %s}' % SURROGATE,
                            content_type="application/json")
    assert_problem(response, 400)
    assert client.get(f"/organizations/{org['id']}").get_json()["title"] == "Kept"


@pytest.mark.parametrize("flt", ["last_scanned_on>99999999999999999999",
                                 "last_scanned_on<-9223372036854775809"])
def test_integers_beyond_64_bits_in_a_filter_are_422(client, flt):
    assert_problem(client.get("/kubeclusters", query_string={"filter": flt}), 422, "query.filter")


def test_the_largest_64_bit_integer_is_a_fine_filter(client):
    response = client.get("/kubeclusters",
                          query_string={"filter": "last_scanned_on<9223372036854775807"})
    assert response.status_code == 200


@pytest.mark.parametrize("version", ['"1.99999"', '"1.2.3.4"', '"1..2"', '"v"'])
def test_versions_outside_the_grammar_are_422_in_filters(client, version):
    assert_problem(client.get("/kubeclusters", query_string={"filter": f"version<{version}"}),
                   422, "query.filter")


@pytest.mark.parametrize("term", ['name="n{}"', 'NOT name="n{}"', 'NOT NOT name="n{}"'])
def test_more_comparisons_and_nots_than_allowed_is_422(client, term):
    count = filtering.MAX_TERMS // (1 + term.count("NOT"))  # each NOT is a term too
    allowed = " OR ".join(term.format(i) for i in range(count))
    assert client.get("/kubeclusters", query_string={"filter": allowed}).status_code == 200
    over = allowed + " OR " + term.format("x")
    body = assert_problem(client.get("/kubeclusters", query_string={"filter": over}), 422,
                          "query.filter")
    assert f"more than {filtering.MAX_TERMS} comparisons and NOTs" in body["detail"]


@pytest.mark.parametrize("query, name", [
    ("limit=1&limit=2", "limit"), ("filter=a&filter=b", "filter"),
    ("continue=&continue=", "continue"), ("limit=5&limit=5", "limit"),
])
def test_a_query_parameter_given_twice_is_422_at_its_name(client, query, name):
    body = assert_problem(client.get(f"/organizations?{query}"), 422, f"query.{name}")
    assert len(body["errors"]) == 1


def test_force_given_twice_is_422_and_deletes_nothing(client, inventory):
    platform = inventory.platform()
    assert_problem(client.delete(f"/kubeplatforms/{platform['name']}?force=false&force=true"),
                   422, "query.force")
    assert client.get(f"/kubeplatforms/{platform['name']}").status_code == 200


@pytest.mark.parametrize("query", ["filter=%ff", "filter=title%3D%22%C3%28%22", "limit=%ed%a0%80",
                                   "x%80=1"])
def test_a_query_string_that_is_not_utf8_is_400(client, query):
    body = assert_problem(client.get(f"/organizations?{query}"), 400, "query")
    assert "UTF-8" in body["detail"]


@pytest.mark.parametrize("title", ["line\u2028separator", "paragraph\u2029separator",
                                   "new\nline", "next\u0085line"])
def test_line_breaks_in_single_line_fields_are_422(client, title):
    assert_problem(client.post("/organizations", json={"title": title}), 422, "body.title")


@pytest.mark.parametrize("endpoint", [
    "https://api\u0000.example.com", "https://api.example.com/\u001b[31m",
    "https://api.example.com/\u202egnp.exe", "https://\u202eapi.example.com",
    "https://api\u200b.example.com", "https://api.example.com/a\u2028b",
    "https://api.example.com/<script>", 'https://api.example.com/"onmouseover=x',
    "https://-a-.com", "https://api.example.com\\@evil.example"])
def test_an_endpoint_with_control_bidi_or_markup_characters_is_422_at_its_field(
        client, inventory, endpoint):
    # endpoint reaches Argo CD's `server` and Prometheus' targets verbatim
    cluster = inventory.cluster()
    body = assert_problem(client.patch(f"/kubeclusters/{cluster['name']}",
                                       json={"endpoint": endpoint}), 422, "body.endpoint")
    (entry,) = body["errors"]
    assert entry["location"] == "body.endpoint" and entry["message"].startswith("Must ")
    assert client.get(f"/kubeclusters/{cluster['name']}").get_json()["endpoint"] is None


def test_line_separators_are_kept_in_descriptions(client):
    response = client.post("/organizations", json={"title": "A", "description": "a\u2028b"})
    assert response.status_code == 201


def test_labels_are_limited_on_the_merged_record_not_only_the_request(client, inventory):
    cluster = inventory.cluster(labels={f"k{i}": "v" for i in range(60)})
    path = f"/kubeclusters/{cluster['name']}"
    body = assert_problem(client.patch(path, json={"labels": {f"n{i}": "v" for i in range(5)}}),
                          422, "body.labels")
    assert "65" in body["detail"]
    assert len(client.get(path).get_json()["labels"]) == 60
    # removing and adding in one patch counts the result
    swap = {**{f"k{i}": None for i in range(5)}, **{f"n{i}": "v" for i in range(9)}}
    assert client.patch(path, json={"labels": swap}).status_code == 200
    assert len(client.get(path).get_json()["labels"]) == 64


def test_an_error_body_lists_a_bounded_number_of_entries(client, inventory):
    cluster = inventory.cluster()
    labels = {f"-bad{i}-": "v" for i in range(5000)}
    response = client.patch(f"/kubeclusters/{cluster['name']}", json={"labels": labels})
    body = assert_problem(response, 422)
    assert len(body["errors"]) == MAX_ENTRIES + 1
    assert "more problems" in body["errors"][-1]["message"]
    assert len(response.data) < 20_000


def test_an_echoed_value_is_shortened(client):
    response = client.post("/organizations", json={"title": "x" * 100_000})
    body = assert_problem(response, 422, "body.title")
    assert len(body["errors"][0]["value"]) < 300 and len(response.data) < 5000


@pytest.mark.parametrize("path", ["//organizations", "/kubeclusters//x", "/organizations//x/"])
def test_a_double_slash_is_a_404_not_a_redirect(client, path):
    response = client.get("/", environ_overrides={"PATH_INFO": path})
    assert_problem(response, 404)
    assert "Location" not in response.headers


def test_a_body_over_the_limit_is_413_and_one_at_the_limit_is_read(client, app):
    limit = 1024 * 1024
    padding = limit - len('{"title": "x", "description": ""}')
    exact = '{"title": "x", "description": "%s"}' % (" " * padding)
    assert len(exact) == limit
    response = client.post("/organizations", data=exact, content_type="application/json")
    assert response.status_code == 422  # read whole: only the description's length is wrong
    assert_problem(client.post("/organizations", data=exact + " ",
                               content_type="application/json"), 413)


# -- hosts ------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "localhost.evil.example", "127.0.0.2",
                                  "[::2]:80"])
def test_a_forged_host_is_400_and_named_nowhere(client, host):
    response = client.post("/organizations", json={"title": "A"}, headers={"Host": host})
    body = assert_problem(response, 400, "header.host")
    assert host not in json.dumps({k: v for k, v in body.items() if k != "errors"})
    assert host not in str(response.headers)
    assert client.get("/organizations").get_json()["results"] == []


@pytest.mark.parametrize("host", ["localhost", "localhost:8000", "127.0.0.1:5000", "[::1]:8000",
                                  "LOCALHOST"])
def test_loopback_hosts_with_any_port_are_allowed(client, host):
    response = client.get("/organizations", headers={"Host": host})
    assert response.status_code == 200
    assert response.get_json()["$schema"].startswith(f"http://{host.lower()}/")


def test_configured_hosts_are_allowed_and_others_not(config):
    from app import create_app

    config.ALLOWED_HOSTS = ["inventory.example.com", ".corp.example"]
    client = client_with(create_app(config), "test-admin-token")
    for host, status in [("inventory.example.com", 201), ("a.corp.example", 201),
                         ("corp.example", 201), ("localhost", 400), ("xcorp.example", 400)]:
        response = client.post("/organizations", json={"title": "A"}, headers={"Host": host})
        assert response.status_code == status, host
        if status == 201:
            assert response.headers["Location"].startswith(f"http://{host}/")


def test_an_idempotent_replay_names_the_host_it_is_asked_through(client):
    headers = {"Idempotency-Key": "host-key"}
    first = client.post("/organizations", json={"title": "A"},
                        headers={**headers, "Host": "localhost:8000"})
    again = client.post("/organizations", json={"title": "A"},
                        headers={**headers, "Host": "127.0.0.1:8000"})
    assert again.headers["Idempotent-Replayed"] == "true"
    assert first.headers["Location"].startswith("http://localhost:8000/")
    assert again.headers["Location"].startswith("http://127.0.0.1:8000/")
    assert again.get_json()["$schema"].startswith("http://127.0.0.1:8000/")


def test_an_idempotent_replay_rebases_only_the_services_urls_never_user_text(client):
    """The first request's host in a description (a quoted link) is the
    user's text: a replay through another host changes `Location`, `Link`
    and `$schema`, and keeps every byte of what the user wrote."""
    headers = {"Idempotency-Key": "quoted-link"}
    body = {"title": "http://localhost:8000/ A",
            "description": "Runbook: http://localhost:8000/organizations (see it)"}
    first = client.post("/organizations", json=body,
                        headers={**headers, "Host": "localhost:8000"})
    again = client.post("/organizations", json=body,
                        headers={**headers, "Host": "127.0.0.1:8000"})
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    replayed = again.get_json()
    assert replayed["title"] == body["title"] and replayed["description"] == body["description"]
    assert replayed == {**first.get_json(), "$schema": replayed["$schema"]}
    assert replayed["$schema"] == first.get_json()["$schema"].replace(
        "http://localhost:8000/", "http://127.0.0.1:8000/")
    assert again.headers["Location"] == first.headers["Location"].replace(
        "http://localhost:8000/", "http://127.0.0.1:8000/")
    assert again.headers["Link"] == first.headers["Link"].replace(
        "http://localhost:8000/", "http://127.0.0.1:8000/")
    assert again.headers["ETag"] == first.headers["ETag"]
    assert again.get_json()["id"] == first.get_json()["id"]


def test_the_answer_that_holds_a_tokens_secret_is_not_cached(client):
    response = client.post("/tokens", json={"name": "t", "role": "reader"})
    assert response.status_code == 201 and response.headers["Cache-Control"] == "no-store"


def test_unknown_methods_are_one_metrics_label(client):
    for index in range(5):
        client.open(f"/nope{index}", method=f"JUNK{index}")
    text = client.get("/metrics").get_data(as_text=True)
    assert "JUNK" not in text and "/nope" not in text
    assert 'method="other",route="unmatched"' in text


# -- bounded page work ------------------------------------------------------


@pytest.fixture
def small_window(monkeypatch):
    """A page examines at most 7 records: the logic of the bound, at a size
    a test can walk (the real bound is tested on the store, at scale)."""
    monkeypatch.setattr(pages, "MAX_EXAMINED", 7)


def test_a_filtered_page_stops_at_its_bound_and_a_walk_finds_every_match_once(
        client, inventory, small_window):
    wanted = set()
    for i in range(40):
        org = inventory.org(title="match" if i % 9 == 0 else "other")
        if i % 9 == 0:
            wanted.add(org["id"])
    first = client.get("/organizations", query_string={"filter": 'title="match"', "limit": 100})
    body = first.get_json()
    assert len(body["results"]) < len(wanted) and body["pagination"]["continue"]
    records, pages = walk(client, "/organizations", filter='title="match"', limit=100)
    assert sorted(r["id"] for r in records) == sorted(wanted)
    assert pages >= 40 // 7


def test_a_filter_that_matches_nothing_answers_empty_pages_with_a_token(client, inventory,
                                                                       small_window):
    for _ in range(20):
        inventory.org()
    body = client.get("/organizations", query_string={"filter": 'title="none"'}).get_json()
    assert body["results"] == [] and body["pagination"]["continue"]
    records, pages = walk(client, "/organizations", filter='title="none"')
    assert records == [] and pages == 3  # 7 + 7 + the last 6


def test_an_unfiltered_page_is_never_short(client, inventory, small_window):
    for _ in range(20):
        inventory.org()
    body = client.get("/organizations", query_string={"limit": 15}).get_json()
    assert len(body["results"]) == 15
