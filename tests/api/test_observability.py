"""Request ids, JSON logs, metrics."""
import json
import logging

import pytest

from inventory.http.observability import JsonFormatter
from tests.conftest import ADMIN_TOKEN, assert_problem


def test_every_response_carries_a_request_id(client, anonymous):
    for response in (client.get("/organizations"), anonymous.get("/healthz"),
                     anonymous.get("/organizations"), client.get("/nope")):
        assert len(response.headers["X-Request-ID"]) >= 8


def test_a_valid_incoming_request_id_is_echoed_and_names_the_error(client):
    response = client.get("/nope", headers={"X-Request-ID": "lb-1234.abc"})
    assert response.headers["X-Request-ID"] == "lb-1234.abc"
    assert response.get_json()["instance"] == "urn:x-request-id:lb-1234.abc"


@pytest.mark.parametrize("incoming", ["", "has space", "x" * 129, "semi;colon", "ünicode"])
def test_an_invalid_incoming_request_id_is_replaced(client, incoming):
    response = client.get("/nope", headers={"X-Request-ID": incoming})
    assert response.headers["X-Request-ID"] != incoming
    body = assert_problem(response, 404)
    assert body["instance"] == f"urn:uuid:{response.headers['X-Request-ID']}"


def test_each_request_is_logged_as_one_json_line_without_the_token(client, caplog):
    caplog.set_level(logging.INFO, logger="inventory.requests")
    client.get("/organizations?limit=5", headers={"X-Request-ID": "req-1"})
    records = [r for r in caplog.records if r.name == "inventory.requests"]
    assert len(records) == 1
    line = JsonFormatter().format(records[0])
    assert "\n" not in line and ADMIN_TOKEN not in line
    entry = json.loads(line)
    assert entry["request_id"] == "req-1" and entry["method"] == "GET"
    assert entry["path"] == "/organizations" and entry["status"] == 200
    assert entry["principal"] == "admin" and entry["duration_ms"] >= 0
    assert entry["route"] == "/organizations"


def test_each_request_is_one_line_on_a_plain_json_handler(client):
    """The direct path: a plain StreamHandler with the JsonFormatter gets one
    line per request, whole, with the request's fields."""
    import io

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("inventory.requests")
    logger.addHandler(handler)
    propagate, level = logger.propagate, logger.level
    logger.propagate = False
    logger.setLevel(logging.INFO)
    try:
        client.get("/organizations?limit=5", headers={"X-Request-ID": "req-2"})
        client.get("/nope")
    finally:
        logger.removeHandler(handler)
        logger.propagate, logger.level = propagate, level
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["request_id"] == "req-2" and first["status"] == 200
    assert first["route"] == "/organizations" and first["principal"] == "admin"
    assert first["level"] == "info" and first["logger"] == "inventory.requests"
    assert second["status"] == 404 and second["route"] == "unmatched"


def test_metrics_count_requests_by_route_and_status(client):
    def count():
        text = client.get("/metrics").get_data(as_text=True)
        for line in text.splitlines():
            if line.startswith("inventory_requests_total{") and 'route="/kubeplatforms/<platform>"' \
                    in line and 'status="422"' in line and 'method="GET"' in line:
                return float(line.rsplit(" ", 1)[1])
        return 0.0
    before = count()
    client.get("/kubeplatforms/Bad_Name")
    assert count() == before + 1
    text = client.get("/metrics").get_data(as_text=True)
    assert "inventory_request_duration_seconds_bucket" in text


def test_metrics_need_a_token(anonymous):
    assert_problem(anonymous.get("/metrics"), 401)
