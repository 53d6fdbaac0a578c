"""The marshmallow internals the dump plans rely on
(inventory.http.marshmallow_internals): where they were written for, and a
plain message when an upgrade moves them."""
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
def test_a_schema_with_a_dump_hook_is_told_from_one_without(hook):
    hooked = type("Hooked", (Schema,), {"value": fields.String(),
                                        "hook": hook(lambda self, data, **_kwargs: data)})
    assert marshmallow_internals.has_dump_hooks(hooked())
    assert not marshmallow_internals.has_dump_hooks(
        type("Plain", (Schema,), {"value": fields.String()})())


def test_a_field_keeps_what_its_class_does_not_override():
    class Shouting(fields.String):
        def _serialize(self, value, attr, obj, **kwargs):
            return str(value).upper()
    assert marshmallow_internals.keeps(Text(10), fields.String, "_serialize")
    assert not marshmallow_internals.keeps(Shouting(), fields.String, "_serialize")
