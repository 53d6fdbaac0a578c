"""The marshmallow fields the schemas share (schemas/fields.py), each
loading what JSON Schema's counterpart accepts and refusing the rest."""
import pytest
from marshmallow import Schema, ValidationError

from inventory.core.labels import MAX_LABELS
from schemas.fields import DumpedAsIs, JsonBoolean, Labels, Slug, Text, WholeNumber


def _loads(field, value):
    return Schema.from_dict({"f": field})().load({"f": value})["f"]


def _refuses(field, value, says=None):
    with pytest.raises(ValidationError, match=says):
        _loads(field, value)


def test_text_has_its_length_and_no_control_characters():
    assert _loads(Text(5), "abcde") == "abcde"
    _refuses(Text(5), "abcdef", "Length must be between 0 and 5")
    _refuses(Text(5), "a\nb", "control characters or line breaks")
    _refuses(Text(5), "a\x00", "control characters")
    assert _loads(Text(20, multiline=True), "one\ntwo\tthree") == "one\ntwo\tthree"
    _refuses(Text(20, multiline=True), "bell\x07", r"control characters\.")
    _refuses(Text(5, min_length=2), "a", "Length must be between 2 and 5")


def test_a_whole_number_is_an_integer_as_json_schema_counts_one():
    assert _loads(WholeNumber(), 5) == 5 and _loads(WholeNumber(), 5.0) == 5
    for bad in (5.5, True, "5"):
        _refuses(WholeNumber(), bad)
    assert _loads(WholeNumber(text=True), "5.0") == 5 and _loads(WholeNumber(text=True), "-3") == -3
    _refuses(WholeNumber(text=True), "5.5")


def test_a_json_boolean_is_true_or_false_only():
    assert _loads(JsonBoolean(), False) is False
    for bad in ("yes", 1, "true", None):
        _refuses(JsonBoolean(), bad)


def test_a_slug_is_a_dns_label():
    assert _loads(Slug(), "prod-1") == "prod-1"
    _refuses(Slug(), "Prod_1", "RFC 1123 DNS label")


def test_labels_have_label_keys_bounded_values_and_a_count():
    assert _loads(Labels(), {"app.kubernetes.io/name": "web"}) == {"app.kubernetes.io/name": "web"}
    _refuses(Labels(), {"-bad": "x"})
    _refuses(Labels(), {f"k{n}": "v" for n in range(MAX_LABELS + 1)}, f"At most {MAX_LABELS}")
    _refuses(Labels(), {"k": None})
    assert _loads(Labels(allow_null_values=True), {"k": None}) == {"k": None}


def test_dumped_as_is_is_not_walked_again():
    shown = {"anything": object()}
    schema = Schema.from_dict({"f": DumpedAsIs(Schema.from_dict({}))})()
    assert schema.dump({"f": shown})["f"] is shown
