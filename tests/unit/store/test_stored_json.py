"""StoredJSON: a field's stored JSON text, handed only to answers, opaque to
every other reader; and what the cluster store reads it as."""
import orjson
import pytest

from inventory.store.pages import PageRequest
from inventory.store.stored_json import StoredJSON, embedded, parsed

CHECKS = [{"id": "kubelet-skew", "status": "error", "details": [{"minor": "1.24", "nodes": 1}]},
          {"id": "deprecated-apis", "status": "passing", "details": []}]
TEXT = orjson.dumps(CHECKS).decode()
PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}


def test_it_pretends_to_be_nothing_but_text():
    text = StoredJSON(TEXT)
    for reading in (iter, len, lambda t: t[0]):
        with pytest.raises(TypeError):
            reading(text)
    assert text != CHECKS and text.text == TEXT


def test_orjson_embeds_it_as_it_is_and_refuses_anything_else():
    odd = '[{"id":"x",  "n":1.50}]'  # spacing and a number spelling only a copy keeps
    assert orjson.dumps({"checks": StoredJSON(odd)}, default=embedded) == \
        b'{"checks":' + odd.encode() + b"}"
    with pytest.raises(TypeError):
        embedded(object())


def test_parsed_parses_every_text_at_any_depth_and_keeps_what_holds_none():
    record = {"name": "a", "readiness": {"status": "error", "checks": StoredJSON(TEXT)},
              "labels": {"team": "x"}, "list": [StoredJSON("[1]"), 2]}
    made = parsed(record)
    assert made == {"name": "a", "readiness": {"status": "error", "checks": CHECKS},
                    "labels": {"team": "x"}, "list": [[1], 2]}
    assert type(made["readiness"]["checks"]) is list and type(made["list"][0]) is list
    assert made["labels"] is record["labels"]  # untouched parts are not copied
    untouched = {"a": {"b": [1, {"c": 2}]}}
    assert parsed(untouched) is untouched


@pytest.fixture
def cluster(store):
    org = store.organizations.create({"title": "Acme", "description": ""}, "tester")
    store.platforms.create({"name": "p1", "organization": org["id"], **PLATFORM}, "tester")
    return store.clusters.create({"name": "c1", "platform": "p1", "environment": "dev",
                                  "version": "1.30.1", "labels": {}}, "tester")


def test_a_cluster_read_as_a_value_holds_its_checks_as_a_plain_list(store, cluster):
    """Every reader but an answer (the console, CSV, integrations, the rules)
    gets plain lists and dicts: from a read, a page, a create, a change."""
    changed = store.clusters.update("c1", {"description": "x"}, "tester")
    page = store.clusters.list(PageRequest(10))
    for record in (cluster, store.clusters.get("c1"), page.records[0], changed):
        checks = record["readiness"]["checks"]
        assert type(checks) is list and all(type(check) is dict for check in checks)
        assert [check["id"] for check in checks][0] == "observed-version"


def test_a_page_read_for_an_answer_holds_the_stored_text(store, cluster):
    answered = store.clusters.list(PageRequest(10, answered=True)).records[0]
    checks = answered["readiness"]["checks"]
    assert type(checks) is StoredJSON
    assert orjson.loads(checks.text) == cluster["readiness"]["checks"]
    assert parsed(answered) == store.clusters.get("c1")


def test_an_event_holds_the_record_as_its_answer_shows_it(store, cluster):
    (event,) = [e for e in store.events.page(PageRequest(50)).records
                if e["type"] == "kubecluster.created"]
    assert event["object"]["readiness"] == cluster["readiness"]
