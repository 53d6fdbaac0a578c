"""Every use the compiled dump plans (inventory.http.dumping) make of
marshmallow's private internals, in one place: whether a schema has dump
hooks (`Schema._hooks`), the schema method a `Method` field calls
(`Method._serialize_method`), and whether a field keeps a base class's
protected implementation (`_serialize`, `_format_num`), which is what
decides that a plan reproduces it.

Written for marshmallow==4.4.0 (requirements.txt pins it). `check()` (run
by tests/unit/http/test_marshmallow_internals.py) fails with a plain message when an
upgrade moves any of it; tests/unit/http/test_dumping.py then also compares every
plan's output with marshmallow's own.
"""
from marshmallow import Schema, fields, post_dump, pre_dump
from marshmallow.decorators import POST_DUMP, PRE_DUMP

from inventory.core.pinned_versions import check_written_for

WRITTEN_FOR = {"marshmallow": "4.4.0"}


def has_dump_hooks(schema):
    """Whether `schema` declares pre_dump or post_dump hooks."""
    return bool(schema._hooks[PRE_DUMP] or schema._hooks[POST_DUMP])


def method_of(field):
    """The bound schema method a (bound) `Method` field calls, or None:
    called directly, a list page's `$schema` costs 3-4 us less a record
    than through `field.serialize` (docs/decisions.md)."""
    return field._serialize_method


def keeps(field, cls, method):
    """Whether `field` uses `cls`'s own implementation of `method`."""
    return getattr(type(field), method) is getattr(cls, method)


def check():
    """Raise AssertionError, saying what moved and what to do, if the
    installed marshmallow is not the one this module was written for."""
    advice = check_written_for(
        "inventory/http/marshmallow_internals.py", WRITTEN_FOR,
        "re-read marshmallow's schema.py and fields.py, adapt that module (the only one that "
        "touches them) and its WRITTEN_FOR, run tests/unit/http/test_dumping.py, then rerun bench/run.py")

    class Hooked(Schema):
        value = fields.Method("shown")

        def shown(self, obj):
            return obj

        @pre_dump
        def before(self, data, **_kwargs):
            return data

        @post_dump
        def after(self, data, **_kwargs):
            return data

    hooked, plain = Hooked(), Schema()
    assert has_dump_hooks(hooked) and not has_dump_hooks(plain), \
        f"Schema._hooks no longer lists pre_dump/post_dump hooks by {PRE_DUMP!r}. {advice}."
    method = method_of(hooked.dump_fields["value"])
    assert callable(method) and method("x") == "x", \
        f"Method._serialize_method is no longer the bound schema method. {advice}."
    for cls, name in ((fields.Field, "_serialize"), (fields.Number, "_format_num")):
        assert callable(getattr(cls, name, None)), f"{cls.__name__}.{name} is gone. {advice}."
