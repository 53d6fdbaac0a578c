"""What a newcomer meets first (issue 22): integral JSON numbers are
integers, a served run's output is JSON lines with no secret in them, and
gunicorn opens no control socket shared by every instance on the machine."""
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.conftest import REAL_MONGO, assert_problem
from tests.support.openapi_document import Document
from tests.support.served import ROOT, Gunicorn, free_port

# --- integers as JSON Schema counts them ---------------------------------


def test_an_integral_json_number_is_an_integer(client, inventory):
    cluster = inventory.cluster()
    answer = client.post(f"/kubeclusters/{cluster['name']}/scans",
                         json={"scanned_on": 1763800000.0})  # what time.time() // 1 makes
    assert answer.status_code == 201 and answer.get_json()["scanned_on"] == 1763800000
    assert type(answer.get_json()["scanned_on"]) is int
    org = client.post("/organizations", json={"title": "Q", "quotas": {
        "platforms": 5.0, "clusters": 10, "tokens": 2.0}})
    assert org.status_code == 201
    assert org.get_json()["quotas"] == {"platforms": 5, "clusters": 10, "tokens": 2,
                                           "webhooks": 20, "rollouts": 20}


@pytest.mark.parametrize("value", [1763800000.5, True, "1763800000", None, 1e300, -1.0])
def test_what_is_not_an_integer_in_range_is_still_a_422(client, inventory, value):
    cluster = inventory.cluster()
    answer = client.post(f"/kubeclusters/{cluster['name']}/scans", json={"scanned_on": value})
    assert_problem(answer, 422, "body.scanned_on")


@pytest.mark.parametrize("text", ["5", "5.0", "5.00"])
def test_an_integral_query_number_is_an_integer(client, inventory, text):
    inventory.org()
    answer = client.get(f"/organizations?limit={text}")
    assert answer.status_code == 200


@pytest.mark.parametrize("text", ["5.5", "true", "+", "5_0", " 5", "1e1", "5.", "0x5", ""])
def test_other_query_numbers_are_a_422(client, text):
    assert_problem(client.get(f"/organizations?limit={text}"), 422, "query.limit")


# --- a served run, as `scripts/serve` starts it ------------------------------

SECRET = re.compile(r"inv_[A-Za-z0-9_-]{20,}")


@pytest.mark.slow
@pytest.mark.skipif(REAL_MONGO, reason="the generated admin token is the embedded store's")
def test_a_served_run_logs_json_lines_only_and_no_secret(tmp_path):
    """gunicorn as the Procfile runs it, with no INVENTORY_ADMIN_TOKEN, its
    output going to files (not a terminal): the generated admin token goes to
    INVENTORY_DATA_DIR/admin-token (0600) and one JSON line says so; nothing
    else it prints is anything but JSON, and no token appears in it. HOME and
    XDG_RUNTIME_DIR are its own: it opens no control socket in either."""
    port, data, home = free_port(), tmp_path / "data", tmp_path / "home"
    home.mkdir()
    env = {key: value for key, value in os.environ.items()
           if key not in ("MONGODB_URI", "INVENTORY_ADMIN_TOKEN")}
    env.update(PORT=str(port), INVENTORY_DATA_DIR=str(data), HOME=str(home),
               XDG_RUNTIME_DIR=str(home / "run"), WEB_CONCURRENCY="1")
    (home / "run").mkdir()
    with open(tmp_path / "stdout", "w") as out, open(tmp_path / "stderr", "w") as err:
        process = subprocess.Popen([os.path.join(os.path.dirname(sys.executable), "gunicorn"),
                                    "app:app"], cwd=ROOT,
                                   env=env, stdout=out, stderr=err)
    try:
        base, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 60
        while not (data / "admin-token").exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        admin = (data / "admin-token").read_text().strip()
        assert (data / "admin-token").stat().st_mode & 0o777 == 0o600

        def call(method, path, body=None, token=admin):
            request = urllib.request.Request(
                base + path, method=method, headers={"Authorization": f"Bearer {token}",
                                                     "Content-Type": "application/json"},
                data=None if body is None else json.dumps(body).encode())
            while True:
                try:
                    with urllib.request.urlopen(request, timeout=10) as answer:
                        return json.loads(answer.read() or b"null")
                except urllib.error.HTTPError as error:
                    return json.loads(error.read())
                except OSError:  # not listening yet
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.2)

        made = call("POST", "/tokens", {"name": "ci", "role": "reader"})
        secrets = {admin, made["token"]}
        assert call("GET", "/organizations", token=made["token"])["results"] == []
        assert call("GET", "/organizations", token="inv_" + "x" * 43)["status"] == 401
    finally:
        process.terminate()
        process.wait(timeout=30)
    stdout, stderr = (tmp_path / "stdout").read_text(), (tmp_path / "stderr").read_text()
    assert stdout == ""
    lines = stderr.splitlines()
    assert len(lines) > 5
    for line in lines:
        record = json.loads(line)  # every line is one JSON object
        assert isinstance(record, dict) and "message" in record
    assert not any(secret in stderr for secret in secrets)
    assert not SECRET.search(stderr)
    told = [json.loads(line)["message"] for line in lines if "admin-token" in line]
    assert told and str(data / "admin-token") in told[0]
    # gunicorn 27's control socket is off: none in $XDG_RUNTIME_DIR or ~/.gunicorn
    assert not list(home.rglob("gunicorn.ctl")) and not (home / ".gunicorn").exists()


# --- the shipped deployments ------------------------------------------------

def test_compose_listens_on_this_machine_only_and_needs_a_token_you_set():
    import yaml
    service = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["inventory"]
    assert all(str(port).startswith("127.0.0.1:") for port in service["ports"])
    token = service["environment"]["INVENTORY_ADMIN_TOKEN"]
    assert token.startswith("${INVENTORY_ADMIN_TOKEN:?")  # compose refuses to start without
    assert "change-me" not in (ROOT / "compose.yaml").read_text()


def test_every_shipped_deployment_with_several_workers_shares_its_metrics():
    import yaml
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]["inventory"]
    app_json = json.loads((ROOT / "app.json").read_text())["env"]
    for env in (compose["environment"], {k: v.get("value") for k, v in app_json.items()}):
        assert int(env["WEB_CONCURRENCY"]) > 1 and env["PROMETHEUS_MULTIPROC_DIR"]


def test_gunicorn_clears_the_metrics_folder_at_start_and_forgets_dead_workers(
        tmp_path, monkeypatch):
    import runpy
    from types import SimpleNamespace
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "metrics"))
    monkeypatch.setenv("MONGODB_URI", "mongodb://pretend")  # two workers may start
    settings = runpy.run_path(str(ROOT / "gunicorn.conf.py"))
    assert settings["control_socket_disable"] is True
    (tmp_path / "metrics").mkdir()
    (tmp_path / "metrics" / "counter_999.db").write_bytes(b"an earlier run")
    settings["on_starting"](SimpleNamespace(cfg=SimpleNamespace(workers=2)))
    assert list((tmp_path / "metrics").iterdir()) == []
    for name in ("gauge_livesum_4242.db", "gauge_livesum_4343.db", "counter_4242.db"):
        (tmp_path / "metrics" / name).write_bytes(b"")
    settings["child_exit"](None, SimpleNamespace(pid=4242))
    # its live gauges go; its counts stay (they still happened)
    assert sorted(p.name for p in (tmp_path / "metrics").iterdir()) == [
        "counter_4242.db", "gauge_livesum_4343.db"]


# --- the OpenAPI document ----------------------------------------------------

def _document(client):
    return client.get("/openapi.json").get_json()


def _operations(document):
    for path, item in document["paths"].items():
        for method, entry in item.items():
            if isinstance(entry, dict) and "operationId" in entry:
                yield path, method, entry


def test_every_operation_declares_what_the_server_layer_may_answer(client):
    for path, method, entry in _operations(_document(client)):
        assert {"400", "408", "413", "414", "431", "501", "503", "505"} <= set(
            entry["responses"]), (method, path)


def test_a_server_layer_error_body_fits_the_documented_schema(client):
    document = Document(_document(client))
    body = {"$schema": "/schemas/Error.json", "status": 431, "title": "Request Header Fields "
            "Too Large", "detail": "A request header field is too long.", "type": "about:blank",
            "instance": "urn:uuid:91a458a6-085c-48b6-914f-7882ca9482f8", "errors": []}
    document.check(body, {"$ref": "#/components/schemas/Error"}, "a 431")


def test_every_schema_has_a_title_and_every_request_body_an_example_it_accepts(client):
    document = _document(client)
    checker = Document(document)
    for name, schema in document["components"]["schemas"].items():
        assert schema["title"] == name
    bodies = {entry["requestBody"]["content"]["application/json"]["schema"]["$ref"]
              for _, _, entry in _operations(document) if "requestBody" in entry}
    assert len(bodies) >= 8
    for ref in bodies:
        schema = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert "example" in schema, ref
        checker.check(schema["example"], {"$ref": ref}, f"the example of {ref}")
        for field in schema["example"]:  # no read-only noise in it
            assert not schema["properties"][field].get("readOnly"), (ref, field)


def test_links_carry_ids_into_what_is_made_next(client):
    responses = {entry["operationId"]: entry["responses"]
                 for _, _, entry in _operations(_document(client))}
    org_links = responses["createOrganization"]["201"]["links"]
    assert org_links["createPlatform"] == {"operationId": "createKubePlatform",
                                           "requestBody": {"organization": "$response.body#/id"}}
    assert org_links["createToken"]["requestBody"] == {"organization": "$response.body#/id"}
    assert responses["createKubePlatform"]["201"]["links"]["createCluster"]["requestBody"] == {
        "platform": "$response.body#/name"}
    assert {"scans", "recordScan"} <= set(responses["createKubeCluster"]["201"]["links"])


def test_the_schemas_index_names_every_schema_with_its_url(anonymous):
    for path in ("/schemas", "/schemas/"):
        answer = anonymous.get(path)
        assert answer.status_code == 200
        index = answer.get_json()["schemas"]
        assert index["KubeCluster"] == "http://localhost/schemas/KubeCluster.json"
        assert anonymous.get("/schemas/KubeCluster.json").get_json()["title"] == "KubeCluster"


def test_the_token_path_parameter_is_an_id_and_says_so(client):
    document = _document(client)
    assert "/tokens/{id}" in document["paths"] and "/tokens/{token}" not in document["paths"]
    made = client.post("/tokens", json={"name": "x", "role": "reader"}).get_json()
    assert client.get(f"/tokens/{made['id']}").status_code == 200
    assert_problem(client.get("/tokens/not-an-id"), 422, "path.id")


@pytest.mark.parametrize("header", ["If-Match", "If-None-Match"])
def test_an_etag_list_longer_than_documented_is_a_422(client, inventory, header):
    org = inventory.org()
    method = client.patch if header == "If-Match" else client.get
    kwargs = {"json": {"title": "B"}} if header == "If-Match" else {}
    tags = ", ".join(f'"{i:016x}"' for i in range(120))  # 2,278 characters
    assert_problem(method(f"/organizations/{org['id']}", headers={header: tags}, **kwargs),
                   422, f"header.{header.lower()}")
    answer = method(f"/organizations/{org['id']}", headers={header: tags[:2000]}, **kwargs)
    assert answer.status_code in (200, 412)


@pytest.mark.skipif(REAL_MONGO, reason="the generated admin token is the embedded store's")
def test_on_a_terminal_the_generated_token_is_shown_there_and_the_log_says_so(
        monkeypatch, caplog):
    import io

    from app import create_app
    from inventory.config import Config

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    app = create_app(Config(ANNOUNCE=True, INVENTORY_ADMIN_TOKEN=None))
    token = app.extensions["inventory.admin_token"]
    assert token in terminal.getvalue()
    assert token not in caplog.text and "shown on the terminal" in caplog.text


@pytest.mark.parametrize("version", ["١.٣٠", "1.３０", "v1.30.٢"])
def test_a_version_in_other_digits_than_ascii_is_refused_as_the_document_says(
        client, inventory, version):
    platform = inventory.platform()
    answer = client.post("/kubeclusters", json={"name": "c", "platform": platform["name"],
                                                "environment": "dev", "version": version})
    assert_problem(answer, 422, "body.version")
    assert_problem(client.get("/kubeclusters", query_string={
        "filter": f'version<"{version}"'}), 422)


@pytest.mark.slow
def test_a_wait_longer_than_the_answer_deadline_still_gets_its_answer():
    """GET /events?wait= goes up to 60 s; the server layer's answer deadline
    is REQUEST_TIMEOUT (30 s) after the head. A wait with nothing to show for
    its whole length answers at its end (it used to be cut: an empty reply)."""
    from inventory.core.caps import REQUEST_TIMEOUT

    wait = int(REQUEST_TIMEOUT) + 3
    server = Gunicorn("front-door-admin-token")
    try:
        started = time.monotonic()
        status, _, body = server.request(
            "GET", f"/events?filter=actor%3D%22nobody%22&wait={wait}", timeout=wait + 30)
        assert status == 200 and body["results"] == []
        assert time.monotonic() - started >= wait
    finally:
        server.stop()
