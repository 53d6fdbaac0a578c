"""The strict JSON body parser: its rules hold whether or not the walk of
the parsed value is spared (inventory.http.parser._may_break_rules)."""
import json

import pytest

from inventory.http.parser import MAX_JSON_DEPTH, parse_json_body


def nested(levels, opener="[", closer="]"):
    return (opener * levels + "1" + closer * levels).encode()


@pytest.mark.parametrize("opener, closer", [("[", "]"), ('{"a":', "}")])
def test_nesting_up_to_the_limit_is_taken_and_past_it_refused(opener, closer):
    assert parse_json_body(nested(MAX_JSON_DEPTH, opener, closer)) is not None
    with pytest.raises(ValueError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        parse_json_body(nested(MAX_JSON_DEPTH + 1, opener, closer))


def test_many_brackets_side_by_side_are_shallow_and_taken():
    """More brackets than the limit (the walk runs): depth, not count, is the rule."""
    body = json.dumps({"items": [[{"a": [1]}] for _ in range(200)]}).encode()
    assert len(parse_json_body(body)["items"]) == 200


@pytest.mark.parametrize("body", [b'{"a": "\\ud800"}', b'{"\\udfff": 1}', b'["ok", "\\uDC00x"]'])
def test_a_lone_surrogate_escape_is_refused(body):
    with pytest.raises(ValueError, match="lone UTF-16 surrogate"):
        parse_json_body(body)


def test_text_given_as_str_is_walked_whatever_it_looks_like():
    """Text not decoded from UTF-8 may carry a lone surrogate without an escape."""
    with pytest.raises(ValueError, match="lone UTF-16 surrogate"):
        parse_json_body('{"a": "\ud800"}')


def test_utf8_cannot_smuggle_a_surrogate():
    with pytest.raises(ValueError, match="not UTF-8"):
        parse_json_body(b'{"a": "\xed\xa0\x80"}')  # U+D800 as if UTF-8 encoded it


def test_a_surrogate_pair_and_plain_unicode_are_fine():
    assert parse_json_body(b'{"a": "\\ud83d\\ude00", "b": "\xc3\xa9"}') == {
        "a": "\U0001F600", "b": "\u00e9"}
