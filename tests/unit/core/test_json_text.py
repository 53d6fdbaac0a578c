"""JSONText: a record's stored JSON text, answered as it is, read as its value."""
import copy

import orjson
import pytest

from inventory.core.json_text import JSONText, plain

CHECKS = [{"id": "kubelet-skew", "status": "error", "details": [{"minor": "1.24", "nodes": 1}]},
          {"id": "deprecated-apis", "status": "passing", "details": []}]
TEXT = orjson.dumps(CHECKS).decode()


def test_it_reads_as_the_value_it_holds():
    text = JSONText(TEXT)
    assert text == CHECKS and CHECKS == text
    assert text != CHECKS[:1]
    assert len(text) == 2 and bool(text) and not JSONText("[]")
    assert [check["id"] for check in text] == ["kubelet-skew", "deprecated-apis"]
    assert text[0]["status"] == "error"
    assert JSONText('{"a": 1}')["a"] == 1
    assert text == JSONText(orjson.dumps(CHECKS, option=orjson.OPT_INDENT_2).decode())


def test_what_a_reader_gets_is_a_copy():
    """Nothing a caller does to what it read changes the text or what the next reader gets."""
    text = JSONText(TEXT)
    for check in text:
        check["status"] = "changed"
    text[0]["details"].append("more")
    text.value()[1]["id"] = "changed"
    assert text == CHECKS and text.text == TEXT
    assert copy.deepcopy(text) == CHECKS


def test_it_is_not_hashable_as_the_list_it_holds():
    with pytest.raises(TypeError):
        hash(JSONText(TEXT))


def test_plain_parses_every_text_at_any_depth_and_keeps_what_holds_none():
    record = {"name": "a", "readiness": {"status": "error", "checks": JSONText(TEXT)},
              "labels": {"team": "x"}, "list": [JSONText("[1]"), 2]}
    made = plain(record)
    assert made == {"name": "a", "readiness": {"status": "error", "checks": CHECKS},
                    "labels": {"team": "x"}, "list": [[1], 2]}
    assert type(made["readiness"]["checks"]) is list and type(made["list"][0]) is list
    assert made["labels"] is record["labels"]  # untouched parts are not copied
    untouched = {"a": {"b": [1, {"c": 2}]}}
    assert plain(untouched) is untouched


def test_an_answer_embeds_the_text_as_it_is(app):
    """The JSON provider writes the stored text byte for byte (no parse,
    no re-serialisation), in an answer and through `dumps`."""
    odd = '[{"id":"x",  "n":1.50}]'  # spacing and a number spelling only a copy keeps
    with app.app_context():
        answer = app.json.response({"checks": JSONText(odd)})
        assert answer.get_data() == b'{"checks":' + odd.encode() + b"}\n"
        assert app.json.dumps({"checks": JSONText(odd)}) == '{"checks":' + odd + "}"
        # past orjson (an integer over 64 bits): the standard library, parsed
        assert app.json.loads(app.json.dumps({"big": 2**70, "checks": JSONText(odd)})) == {
            "big": 2**70, "checks": [{"id": "x", "n": 1.5}]}
