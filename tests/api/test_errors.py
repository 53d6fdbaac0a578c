"""Every failure, of any route and cause, answers with the interface's error body."""
import os

import pytest

from tests.conftest import assert_problem


def test_unknown_route_is_404_problem(client):
    body = assert_problem(client.get("/no/such/route"), 404)
    assert body["title"] == "Not Found" and body["type"] == "about:blank"


def test_wrong_method_is_405_with_allow(client):
    response = client.put("/organizations")
    assert_problem(response, 405)
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}


def test_malformed_json_is_400(client):
    body = assert_problem(client.post("/organizations", data="{bad",
                                      content_type="application/json"), 400)
    assert body["errors"][0]["location"] == "body"


@pytest.mark.parametrize("payload", [
    b'{"title": "a", "title": "b"}',       # duplicate keys
    b'{"title": NaN}',
    b'{"title": Infinity}',
    b'{"title": "\xff\xfe"}',              # not UTF-8
    b"[" * 100 + b"]" * 100,               # nested too deep
    b'{"title": 1' + b"0" * 5000 + b"}",   # an integer too long to read
])
def test_hostile_json_is_400(client, payload):
    assert_problem(client.post("/organizations", data=payload, content_type="application/json"), 400)


def test_body_that_is_not_json_is_415(client):
    body = assert_problem(client.post("/organizations", data="title=x",
                                      content_type="application/x-www-form-urlencoded"), 415)
    assert body["errors"][0]["location"] == "header.content-type"


def test_json_that_is_not_an_object_is_422(client):
    assert_problem(client.post("/organizations", json=["title"]), 422)


def test_body_over_one_mebibyte_is_413(client):
    payload = b'{"title": "' + b"x" * (1024 * 1024) + b'"}'
    assert_problem(client.post("/organizations", data=payload, content_type="application/json"), 413)


def test_422_has_one_entry_per_problem_with_the_value(client):
    body = assert_problem(client.post("/organizations", json={"title": "", "extra": [1]}), 422)
    entries = {e["location"]: e for e in body["errors"]}
    assert set(entries) == {"body.title", "body.extra"}
    assert entries["body.extra"]["value"] == [1] and entries["body.title"]["value"] == ""
    assert all(e["message"] for e in body["errors"])


def test_unexpected_error_is_500_revealing_nothing(app, client, monkeypatch):
    store = app.extensions["inventory.store"]

    def explode(*_args, **_kwargs):
        raise RuntimeError("secret internals at /srv/inventory/store.py line 42")

    monkeypatch.setattr(store.organizations, "list", explode)
    response = client.get("/organizations")
    body = assert_problem(response, 500)
    assert "secret" not in response.get_data(as_text=True)
    assert "store.py" not in response.get_data(as_text=True)
    assert body["errors"] == []


def test_error_instance_is_the_request_id(client):
    response = client.get("/no/such/route")
    body = assert_problem(response, 404)
    assert body["instance"] == f"urn:uuid:{response.headers['X-Request-ID']}"


def test_flask_smorest_error_format_never_appears(client):
    for response in (client.get("/organizations?limit=x"), client.get("/nope"),
                     client.post("/organizations", json={})):
        body = response.get_json()
        assert "code" not in body and "message" not in body


@pytest.mark.parametrize("path", ["/kubeplatforms/%24where", "/kubeplatforms/a.b", "/kubeplatforms/a%00b",
                                  "/kubeclusters/" + "x" * 5000, "/organizations/%24ne",
                                  "/kubeclusters/%00/scans", "/tokens/%2e%2e"])
def test_hostile_path_parameters_are_a_clean_4xx(client, path):
    response = client.get(path)
    assert 400 <= response.status_code < 500
    assert_problem(response, response.status_code)


@pytest.mark.parametrize("query", ["limit=%00", "filter=%00", "continue=%00", "filter=" + "(" * 5000,
                                   "limit=99999999999999999999999"])
def test_hostile_query_parameters_are_a_clean_4xx(client, query):
    response = client.get(f"/organizations?{query}")
    assert_problem(response, 422)


@pytest.mark.parametrize("title", ["nul\x00byte", "bell\x07", "escape\x1b[31m", "del\x7f", "c1\x85"])
def test_control_characters_are_422_and_not_stored(client, title):
    assert_problem(client.post("/organizations", json={"title": title}), 422, "body.title")
    assert client.get("/organizations").get_json()["results"] == []


def test_description_keeps_line_breaks_and_tabs(client):
    org = client.post("/organizations", json={"title": "A", "description": "one\n\ttwo\r\n"})
    assert org.status_code == 201 and org.get_json()["description"] == "one\n\ttwo\r\n"


@pytest.mark.slow
def test_options_lists_allowed_methods_in_one_order_in_every_process():
    """Flask lists a set: its order follows the process's hash seed. Each
    seed runs in a process of its own."""
    import json
    import subprocess
    import sys
    script = ("import json;from tests.conftest import make_config;from app import create_app;"
              "client = create_app(make_config()).test_client();"
              "print(json.dumps([client.options(path).headers['Allow'] for path in "
              "('/kubeclusters', '/kubeclusters/c1', '/organizations')]))")
    answers = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              env={**os.environ, "PYTHONHASHSEED": str(seed)},
                              check=True).stdout.strip().splitlines()[-1]
               for seed in range(4)}
    assert len(answers) == 1
    for allow in json.loads(answers.pop()):
        assert allow.split(", ") == sorted(allow.split(", ")) and "GET" in allow
