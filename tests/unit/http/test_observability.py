"""inventory.http.observability, on its own: the request id (an incoming
X-Request-ID echoed when it looks like an id, else a new UUID) and the URI
an error body names it by; one JSON object per log line, and the direct
access line byte for byte the formatter's; the metrics' labels from fixed
sets only (an unknown method is `other`, an unmatched route `unmatched`).
Through HTTP: tests/api/test_observability.py."""
import json
import logging
import sys
import uuid

import pytest
from flask import Response, g
from prometheus_client import REGISTRY

from inventory.http.observability import (
    JsonFormatter,
    access_line,
    finish_request,
    instance_uri,
    start_request,
)


@pytest.mark.parametrize("incoming", ["lb-1234.abc", "a:b~c_d", "x" * 128])
def test_an_incoming_request_id_that_looks_like_an_id_is_kept(passage, incoming):
    entered = passage(headers={"X-Request-ID": incoming})
    start_request(entered)
    assert entered.request_id == g.request_id == incoming


@pytest.mark.parametrize("incoming", [None, "", "has space", "x" * 129, "semi;colon",
                                      "\u00fcnicode"])
def test_any_other_request_id_is_replaced_by_a_new_uuid(passage, incoming):
    entered = passage(headers={"X-Request-ID": incoming} if incoming is not None else {})
    start_request(entered)
    assert entered.request_id == g.request_id != incoming
    assert str(uuid.UUID(entered.request_id)) == entered.request_id


def test_an_error_names_a_uuid_id_as_a_urn_uuid_and_any_other_as_a_request_id():
    assert instance_uri("0b7e3d1c-8a5f-4c2e-9d41-6f0a2b3c4d5e") == \
        "urn:uuid:0b7e3d1c-8a5f-4c2e-9d41-6f0a2b3c4d5e"
    assert instance_uri("lb-1234") == "urn:x-request-id:lb-1234"
    assert instance_uri("0b7e3d1c-8a5f-4c2e-9d41-6f0a2b3c4d5") == \
        "urn:x-request-id:0b7e3d1c-8a5f-4c2e-9d41-6f0a2b3c4d5"


def test_a_log_line_is_one_json_object_with_its_extras_and_exception():
    record = logging.LogRecord("inventory", logging.WARNING, __file__, 1, "a %s\nb", ("x",),
                               None)
    record.request_id, record.status, record.unlisted = "req-1", 503, "not written"
    try:
        raise ValueError("boom")
    except ValueError:
        record.exc_info = sys.exc_info()
    line = JsonFormatter().format(record)
    assert "\n" not in line
    entry = json.loads(line)
    assert (entry["level"], entry["logger"], entry["message"]) == ("warning", "inventory",
                                                                   "a x\nb")
    assert entry["request_id"] == "req-1" and entry["status"] == 503
    assert "unlisted" not in entry and "ValueError: boom" in entry["exception"]
    assert entry["time"].endswith("Z") and entry["time"][10] == "T"


@pytest.mark.parametrize("path,principal,duration", [
    ("/organizations", "admin", 0.123), ("/kubeclusters/caf\u00e9 \"x\"\\y", None, 12.0),
    ("/\u2603/\U0001f600", "bot \u00fc", 1e-05), ("/x", "a\nb", 1234567.891)])
def test_the_direct_access_line_is_the_formatters_line(path, principal, duration):
    """With logging as the service configures it, the access line is written
    directly (no LogRecord); it must be, to the byte, what JsonFormatter
    writes for the same record."""
    record = logging.LogRecord("inventory.requests", logging.INFO, __file__, 1, "%s %s %s",
                               ("GET", path, 200), None)
    for key, value in {"request_id": "req-1", "method": "GET", "path": path,
                       "route": "/kubeclusters/<cluster>", "status": 200,
                       "duration_ms": duration, "principal": principal}.items():
        setattr(record, key, value)
    assert access_line(record.created, "GET", path, 200, "req-1", "/kubeclusters/<cluster>",
                       duration, principal) == JsonFormatter().format(record)


def requests_counted(method, route, status):
    return REGISTRY.get_sample_value("inventory_requests_total",
                                     {"method": method, "route": route, "status": status}) or 0


@pytest.mark.parametrize("method, path, label, route", [
    ("GET", "/organizations", "GET", "/organizations"),
    ("BREW", "/organizations", "other", "unmatched"),
    ("GET", "/no-such-route", "GET", "unmatched")])
def test_the_metrics_labels_come_from_fixed_sets(passage, method, path, label, route):
    before = requests_counted(label, route, "418")
    entered = passage(path, method=method, headers={"X-Request-ID": "req-7"})
    start_request(entered)
    answer = finish_request(entered, Response(status=418))
    assert answer.headers["X-Request-ID"] == "req-7"
    assert requests_counted(label, route, "418") == before + 1
    assert requests_counted(method, route, "418") == (before + 1 if method == label else 0)


def test_a_request_the_gate_never_let_in_gets_an_id_all_the_same(passage):
    entered = passage("/organizations")  # no way in ran: no id, no start
    answer = finish_request(entered, Response(status=400))
    assert answer.headers["X-Request-ID"] == "unknown"
