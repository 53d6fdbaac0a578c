"""The marshmallow internals the dump plans rely on
(inventory/http/marshmallow_internals.py), pinned: each pinned reader
answers as marshmallow does at the pinned version, or check() fails loudly
(what moved, what to do)."""
import pytest
from marshmallow import Schema, fields, post_dump, pre_dump

from inventory.http import marshmallow_internals
from schemas.fields import Text


def test_the_internals_are_where_they_were_written_for():
    marshmallow_internals.check()


def test_an_upgrade_is_named_with_what_to_do(monkeypatch):
    monkeypatch.setattr(marshmallow_internals, "WRITTEN_FOR", {"marshmallow": "0.0.1"})
    with pytest.raises(AssertionError, match=r"marshmallow 4\.4\.0 is installed\. "
                                             r"inventory/http/marshmallow_internals\.py was "
                                             r"written for marshmallow==0\.0\.1: re-read"):
        marshmallow_internals.check()


@pytest.mark.parametrize("hook", [pre_dump, post_dump])
def test_has_dump_hooks_tells_a_schema_with_a_dump_hook_from_one_without(hook):
    hooked = type("Hooked", (Schema,), {"value": fields.String(),
                                        "hook": hook(lambda self, data, **_kwargs: data)})
    assert marshmallow_internals.has_dump_hooks(hooked())
    assert not marshmallow_internals.has_dump_hooks(
        type("Plain", (Schema,), {"value": fields.String()})())


def test_method_of_is_the_schema_method_a_method_field_calls():
    class Shown(Schema):
        value = fields.Method("shown")

        def shown(self, obj):
            return f"shown {obj['value']}"
    schema = Shown()
    method = marshmallow_internals.method_of(schema.dump_fields["value"])
    assert method.__self__ is schema
    assert method({"value": 1}) == schema.dump({"value": 1})["value"] == "shown 1"


def test_keeps_tells_a_field_that_keeps_its_class_implementation_from_one_that_overrides_it():
    class Shouting(fields.String):
        def _serialize(self, value, attr, obj, **kwargs):
            return str(value).upper()
    assert marshmallow_internals.keeps(Text(10), fields.String, "_serialize")
    assert not marshmallow_internals.keeps(Shouting(), fields.String, "_serialize")
