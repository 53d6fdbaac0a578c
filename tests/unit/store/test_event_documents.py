"""An event as the feed stores it and as the API shows it
(inventory/store/event_documents.py)."""
import orjson

from inventory.store.event_documents import (
    ESCAPED,
    OBJECT,
    acting,
    acting_as,
    event_document,
    event_to_api,
)
from inventory.store.stored_json import StoredJSON

RECORD = {"name": "c1", "labels": {"app.kubernetes.io/name": "web"},
          "readiness": {"status": "passing", "checks": StoredJSON('[{"id":"x"}]')}}


def _stored(event, slot="0000000000000001"):
    return {**event, "_id": slot, "at": None, "occurred_on": "2026-01-01T00:00:00Z"}


def test_the_object_is_one_json_string_with_stored_text_embedded_as_it_is():
    event = event_document("kubecluster", "created", "k", "/kubeclusters/c1", RECORD, "org")
    assert event[OBJECT] == ('{"name":"c1","labels":{"app.kubernetes.io/name":"web"},'
                             '"readiness":{"status":"passing","checks":[{"id":"x"}]}}')
    assert ESCAPED not in event and "object" not in event
    shown = event_to_api(_stored(event))
    assert shown["id"] == "evt_0000000000000001" and shown["type"] == "kubecluster.created"
    assert shown["object"]["readiness"]["checks"] == [{"id": "x"}]
    assert shown["organization"] == "org" and "key" not in shown and OBJECT not in shown


def test_past_json_an_object_is_a_document_with_its_keys_escaped_and_read_back():
    record = {**RECORD, "big": 2**70}
    changes = {'labels."a.b"': {"from": {"a.b": 1}, "to": None}}
    event = event_document("kubecluster", "updated", "k", "/s", record, None, changes)
    assert event[ESCAPED] is True and OBJECT not in event and "organization" not in event
    assert not any("." in key for key in event["object"]["labels"])  # stored escaped
    shown = event_to_api(_stored(event))
    assert shown["object"] == {**RECORD, "big": 2**70,
                               "readiness": {"status": "passing", "checks": [{"id": "x"}]}}
    assert shown["changes"] == changes


def test_the_actor_is_the_requests_or_the_one_acting_inside():
    acting_as("alice")
    assert event_document("k", "created", "1", "/s", {}, None)["actor"] == "alice"
    with acting("system"):
        assert event_document("k", "created", "2", "/s", {}, None)["actor"] == "system"
    assert event_document("k", "created", "3", "/s", {}, None)["actor"] == "alice"
    assert orjson.loads(event_document("k", "created", "4", "/s", {"a": 1}, None)[OBJECT]) == {
        "a": 1}
