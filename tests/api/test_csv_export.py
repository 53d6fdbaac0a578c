"""Every list as CSV (`format=csv` or `Accept: text/csv`): the whole match,
streamed, in the list's order, with a header row of the flattened fields;
bounded, scoped, never a file that could pass for whole when it is not."""
import csv
import io
import json

import pytest

from app import create_app
from inventory.http import csv_export
from inventory.http.csv_export import ExportBroken
from tests.conftest import (
    ADMIN_TOKEN,
    ClosingClient,
    assert_problem,
    client_with,
    make_config,
    walk,
)
from tests.support.receiver import Receiver


@pytest.fixture
def config():
    return make_config(WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"])


def rows_of(response):
    """(header, [dict per row]) of a CSV answer, checked as one."""
    assert response.status_code == 200, response.get_data(as_text=True)[:500]
    assert response.headers["Content-Type"] == "text/csv; charset=utf-8"
    assert response.headers["Content-Disposition"].startswith('attachment; filename="')
    text = response.get_data().decode("utf-8")
    assert text.endswith("\r\n")
    table = list(csv.reader(io.StringIO(text, newline="")))
    header, rows = table[0], table[1:]
    assert len(set(header)) == len(header)
    assert all(len(row) == len(header) for row in rows)
    return header, [dict(zip(header, row)) for row in rows]


def flattened(record, prefix=""):
    """A JSON record as the documented CSV cells, worked out here on its own."""
    cells = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and key != "object" and key != "changes":
            cells.update(flattened(value, f"{name}."))
        elif isinstance(value, (list, dict)):
            cells[name] = json.dumps(value, sort_keys=True, separators=(",", ":"))
        elif value is None:
            cells[name] = ""
        elif isinstance(value, bool):
            cells[name] = "true" if value else "false"
        elif isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r", "\n",
                                                      "\uff1d", "\uff0b", "\uff0d", "\uff20"):
            cells[name] = "'" + value
        else:
            cells[name] = str(value)
    return cells


def same_as_json(client, path, **params):
    """The CSV of `path` holds the JSON walk's records, in its order, cell for cell."""
    header, rows = rows_of(client.get(path, query_string={**params, "format": "csv"}))
    records, _ = walk(client, path, limit=3, **params)
    assert len(rows) == len(records)
    for row, record in zip(rows, records):
        expected = flattened(record)
        # a null object (a cluster never observed, a scan's parts) is its
        # fields' columns, each empty
        for name in [k for k, v in expected.items() if v == "" and k not in header]:
            nested = [column for column in header if column.startswith(f"{name}.")]
            assert nested and all(row[column] == "" for column in nested), name
            del expected[name]
        assert set(expected) <= set(header)
        assert {k: v for k, v in row.items() if k not in expected} == \
            {k: "" for k in header if k not in expected}
        assert {k: row[k] for k in expected} == expected
    return header, rows


@pytest.fixture
def estate(client, inventory):
    org = inventory.org(title="=SUM(A1:A9)")["id"]
    platform = inventory.platform(org, name="eks-prod")["name"]
    inventory.cluster(platform, name="payments", labels={"team": "core", "tier": "-1"},
                      title='Payments, "EU"', description="line one\nline two")
    inventory.cluster(platform, name="ledger", version="1.29.4", labels={"owner": "ops"})
    inventory.cluster(platform, name="zeta", version="1.33.1", endpoint="https://a.example.com")
    inventory.scan("payments", 1763800000)
    inventory.scan("payments", 1763900000)
    client.post("/tokens", json={"name": "bot", "role": "reader", "organization": org})
    return org


@pytest.fixture
def webhook(client, estate):
    receiver = Receiver()
    made = client.post("/webhooks", json={"url": receiver.url, "description": "@ops"})
    assert made.status_code == 201
    client.post("/organizations", json={"title": "after the webhook"})
    deliverer = client.application.extensions["inventory.webhooks"]
    deliverer.timeout = 1.0
    for thread in deliverer.run_once():
        thread.join(10)
    yield made.get_json()["id"]
    receiver.close()


LISTS = ["/organizations", "/kubeplatforms", "/kubeclusters", "/kubeclusters/payments/scans",
         "/tokens", "/events", "/webhooks"]


@pytest.mark.parametrize("path", LISTS)
def test_every_list_as_csv_holds_the_json_pages_records_in_order(client, estate, webhook, path):
    header, rows = same_as_json(client, path)
    assert rows


def test_webhook_deliveries_as_csv(client, webhook):
    header, rows = same_as_json(client, f"/webhooks/{webhook}/deliveries")
    assert rows and "status_code" in header


def test_the_header_flattens_nested_fields_and_makes_one_column_per_label(client, estate):
    header, rows = rows_of(client.get("/kubeclusters", headers={"Accept": "text/csv"}))
    assert header[:6] == ["id", "name", "platform", "organization", "environment", "version"]
    assert [name for name in header if name.startswith("labels.")] == \
        ["labels.owner", "labels.team", "labels.tier"]
    for name in ("support.status", "support.all_ends_on", "support.lifecycle.minor",
                 "last_scanned_on", "endpoint"):
        assert name in header
    assert "labels" not in header and "support" not in header and "$schema" not in header
    by_name = {row["name"]: row for row in rows}
    assert by_name["payments"]["labels.team"] == "core" and by_name["ledger"]["labels.team"] == ""
    assert by_name["payments"]["last_scanned_on"] == "1763900000"
    assert by_name["ledger"]["endpoint"] == "" and by_name["ledger"]["last_scanned_on"] == ""


def test_cells_are_quoted_as_rfc_4180_says(client, estate):
    text = client.get("/kubeclusters?format=csv").get_data(as_text=True)
    assert '"Payments, ""EU"""' in text and '"line one\nline two"' in text
    _, rows = rows_of(client.get("/kubeclusters?format=csv"))
    payments = next(row for row in rows if row["name"] == "payments")
    assert payments["title"] == 'Payments, "EU"' and payments["description"] == "line one\nline two"


def test_cells_a_spreadsheet_would_run_as_formulas_are_neutralised(client, estate, webhook):
    _, orgs = rows_of(client.get("/organizations?format=csv"))
    assert orgs[0]["title"] == "'=SUM(A1:A9)"
    _, clusters = rows_of(client.get("/kubeclusters?format=csv"))
    assert next(r for r in clusters if r["name"] == "payments")["labels.tier"] == "'-1"
    _, hooks = rows_of(client.get("/webhooks?format=csv"))
    assert hooks[0]["description"] == "'@ops"


HOSTILE = ["a;=cmd|' /C calc'!A0;b", "\uff1dHYPERLINK(\"http://x\")", "\n=1+1",
           'x;"=2+2', "p|@SUM(A1)", "t\t-3", "line one\r\n+4", "plain, text"]


@pytest.mark.parametrize("separator", [",", ";", "\t", "|"])
def test_no_spreadsheet_takes_a_cell_for_a_formula_whatever_it_splits_on(
        client, inventory, separator):
    """The export read as a spreadsheet of each locale or import choice reads
    it (quotes honoured at a cell's start only): no cell starts a formula,
    and read with the comma the hostile texts come back whole, each behind
    its `'`s."""
    platform = inventory.platform()["name"]
    for number, text in enumerate(HOSTILE):
        # a title holds no control characters; a description does
        inventory.cluster(platform, name=f"h{number}", description=text,
                          title="".join(c for c in text if c >= " "))
    text = client.get("/kubeclusters?format=csv").get_data(as_text=True)
    assert "\"a;'=cmd|' /C calc'!A0;b\"," in text  # quoted: one cell, from its start
    table = list(csv.reader(io.StringIO(text, newline=""), delimiter=separator))
    # OWASP's, and their full-width forms (a cell's leading tab or line break
    # is stripped here: what follows it must not start a formula either)
    starts = set("=+-@\uff1d\uff0b\uff0d\uff20")
    formulas = [cell for row in table for cell in row
                if cell.lstrip('" \t\r\n')[:1] in starts]
    assert not formulas, formulas
    if separator == ",":
        _, rows = rows_of(client.get("/kubeclusters?format=csv"))
        written = {row["name"]: row["description"] for row in rows}
        for number, hostile in enumerate(HOSTILE):
            assert written[f"h{number}"].replace("'", "") == hostile.replace("'", "")


def test_the_answer_is_streamed(client, estate):
    response = client.get("/kubeclusters?format=csv", buffered=False)
    assert response.status_code == 200 and response.is_streamed
    assert "Content-Length" not in response.headers
    chunks = list(response.response)
    assert len(chunks) >= 2  # the header, then the rows page by page
    response.close()


@pytest.mark.parametrize("query, accept, as_csv", [
    ({}, None, False),
    ({}, "*/*", False),
    ({}, "text/csv", True),
    ({}, "text/csv, application/json;q=0.5", True),
    ({}, "application/json, text/csv;q=0.5", False),
    ({"format": "csv"}, "application/json", True),
    ({"format": "csv"}, None, True),
    ({"format": "json"}, "text/csv", False),
])
def test_format_wins_over_accept(client, estate, query, accept, as_csv):
    headers = {"Accept": accept} if accept else {}
    for path in ("/kubeclusters", "/events"):
        response = client.get(path, query_string=query, headers=headers)
        assert response.status_code == 200
        assert (response.mimetype == "text/csv") is as_csv, (path, query, accept)


@pytest.mark.parametrize("value", ["CSV", "xml", ""])
def test_an_unknown_format_is_422(client, value):
    assert_problem(client.get("/kubeclusters", query_string={"format": value}), 422,
                   "query.format")


@pytest.mark.parametrize("query, location", [
    ({"filter": "environment="}, "query.filter"),
    ({"filter": "nosuchfield=1"}, "query.filter"),
    ({"order_by": "title"}, "query.order_by"),
    ({"continue": "forged"}, "query.continue"),
    ({"limit": "101"}, "query.limit"),
])
def test_bad_lists_are_problem_json_before_any_csv(client, estate, query, location):
    assert_problem(client.get("/kubeclusters", query_string={**query, "format": "csv"}), 422,
                   location)


def test_filter_and_order_apply_and_limit_does_not(client, estate):
    _, rows = rows_of(client.get("/kubeclusters", query_string={
        "format": "csv", "filter": 'version>="1.30"', "order_by": "version desc", "limit": 1}))
    assert [row["name"] for row in rows] == ["zeta", "payments"]


def test_csv_from_a_continue_token_is_the_rest_of_the_match(client, estate):
    first = client.get("/kubeclusters?limit=1").get_json()
    _, rows = rows_of(client.get("/kubeclusters", query_string={
        "format": "csv", "continue": first["pagination"]["continue"]}))
    assert [row["name"] for row in rows] == ["payments", "zeta"]


def test_an_empty_match_is_the_header_alone(client, estate):
    header, rows = rows_of(client.get("/kubeclusters", query_string={
        "format": "csv", "filter": 'environment="nowhere"'}))
    assert rows == [] and "name" in header


def test_a_scoped_tokens_csv_holds_its_organization_only(app, client, inventory, estate):
    other = inventory.org(title="Other")["id"]
    inventory.cluster(inventory.platform(other)["name"], name="elsewhere")
    token = client.post("/tokens", json={"name": "scoped", "role": "reader",
                                         "organization": estate}).get_json()["token"]
    scoped = client_with(app, token)
    for path in ("/kubeclusters", "/kubeplatforms", "/organizations", "/events"):
        _, rows = rows_of(scoped.get(path, query_string={"format": "csv"}))
        assert rows
        assert all(estate in (row.get("organization"), row.get("id")) for row in rows), path
    _, everyone = rows_of(client.get("/kubeclusters?format=csv"))
    assert "elsewhere" in {row["name"] for row in everyone}


def test_a_reader_cannot_export_what_it_cannot_list(app, client, estate):
    reader = client.post("/tokens", json={"name": "r", "role": "reader"}).get_json()["token"]
    assert_problem(client_with(app, reader).get("/tokens?format=csv"), 403)


def test_past_the_maximum_rows_is_422_before_the_first_byte(client, estate, monkeypatch):
    monkeypatch.setattr(csv_export, "MAX_CSV_ROWS", 3)
    rows_of(client.get("/kubeclusters?format=csv"))  # 3: whole
    client.post("/kubeclusters", json={"name": "fourth", "platform": "eks-prod",
                                       "environment": "dev", "version": "1.31.0"})
    body = assert_problem(client.get("/kubeclusters?format=csv"), 422, "query.filter")
    assert "More than 3 records match" in body["detail"] and "never truncated" in body["detail"]
    rows_of(client.get("/kubeclusters?format=csv&filter=environment=\"production\""))


def test_past_the_maximum_columns_is_422_before_the_first_byte(client, estate, monkeypatch):
    header, _ = rows_of(client.get("/kubeclusters?format=csv"))
    monkeypatch.setattr(csv_export, "MAX_CSV_COLUMNS", len(header) - 1)
    body = assert_problem(client.get("/kubeclusters?format=csv"), 422, "query.filter")
    assert "columns" in body["detail"]


def test_a_match_grown_past_the_maximum_while_streaming_breaks_the_stream(client, estate,
                                                                          monkeypatch):
    monkeypatch.setattr(csv_export, "MAX_CSV_ROWS", 3)
    monkeypatch.setattr(csv_export, "PAGE", 1)
    response = client.get("/kubeclusters?format=csv", buffered=False)
    assert response.status_code == 200  # counted: 3
    client.post("/kubeclusters", json={"name": "aaa", "platform": "eks-prod",
                                       "environment": "dev", "version": "1.31.0"})
    with pytest.raises(ExportBroken):
        list(response.response)


def test_a_label_the_header_lacks_breaks_the_stream(client, estate, monkeypatch):
    monkeypatch.setattr(csv_export, "PAGE", 1)
    response = client.get("/kubeclusters?format=csv", buffered=False)
    client.patch("/kubeclusters/zeta", json={"labels": {"new": "x"}})
    with pytest.raises(ExportBroken):
        list(response.response)


def failing_after(monkeypatch, store, calls):
    """The clusters' pages read `calls` times, then the database gone."""
    original, made = store.clusters.list, []

    def failing(request):
        made.append(request)
        if len(made) > calls:
            raise ConnectionError("the database went away")
        return original(request)
    monkeypatch.setattr(store.clusters, "list", failing)


def test_a_store_failing_mid_stream_breaks_the_stream(app, client, estate, monkeypatch):
    monkeypatch.setattr(csv_export, "PAGE", 1)
    failing_after(monkeypatch, app.extensions["inventory.store"], 3 + 1)  # counted, 1 streamed
    response = client.get("/kubeclusters?format=csv", buffered=False)
    assert response.status_code == 200
    chunks = iter(response.response)
    assert next(chunks).startswith(b"id,name,")
    assert b"ledger" in next(chunks)
    with pytest.raises(ExportBroken):
        list(chunks)


def test_served_a_broken_stream_ends_without_its_last_chunk(app, client, estate, monkeypatch):
    """Over HTTP/1.1 the client sees an incomplete chunked body, not a short file."""
    import http.client
    import threading

    from werkzeug.serving import make_server
    monkeypatch.setattr(csv_export, "PAGE", 1)
    failing_after(monkeypatch, app.extensions["inventory.store"], 3 + 1)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=10)
        connection.request("GET", "/kubeclusters?format=csv",
                           headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        answer = connection.getresponse()
        assert answer.status == 200 and answer.getheader("Transfer-Encoding") == "chunked"
        with pytest.raises(http.client.IncompleteRead):
            answer.read()
    finally:
        server.shutdown()


def test_the_csv_request_counts_against_the_rate_limit():
    app = create_app(make_config(RATE_LIMIT="2 per minute"))
    app.test_client_class = ClosingClient
    token = client_with(app, ADMIN_TOKEN).post(
        "/tokens", json={"name": "bot", "role": "reader"}).get_json()["token"]
    reader = client_with(app, token)
    assert reader.get("/organizations?format=csv").status_code == 200
    assert reader.get("/organizations?format=csv").status_code == 200
    assert_problem(reader.get("/organizations?format=csv"), 429)


def test_events_as_csv_take_after_but_not_wait(client, estate):
    events = client.get("/events?limit=100").get_json()["results"]
    _, rows = rows_of(client.get("/events", query_string={"format": "csv",
                                                          "after": events[1]["id"]}))
    assert [row["id"] for row in rows] == [e["id"] for e in events[2:]]
    assert_problem(client.get("/events?format=csv&wait=1"), 422, "query.wait")
    _, newest_first = rows_of(client.get("/events?format=csv&order_by=occurred_on%20desc"))
    assert [row["id"] for row in newest_first] == [e["id"] for e in reversed(events)]


def test_the_document_declares_csv_and_format_on_every_list(client):
    document = client.get("/openapi.json").get_json()
    paged = {"listOrganizations", "listKubePlatforms", "listKubeClusters", "listKubeClusterScans",
             "listTokens", "listEvents", "listWebhooks", "listWebhookDeliveries", "listRollouts",
             "listRolloutClusters"}
    lists = [(path, item["get"]) for path, item in document["paths"].items()
             if "get" in item and "continue" in {p["name"] for p in
                                                 item["get"].get("parameters", [])}]
    assert {op["operationId"] for _, op in lists} == paged
    for path, op in lists:
        assert "text/csv" in op["responses"]["200"]["content"], path
        formats = [p for p in op["parameters"] if p["name"] == "format"]
        assert formats and formats[0]["schema"]["enum"] == ["json", "csv"], path
