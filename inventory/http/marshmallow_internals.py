"""Every use the compiled dump plans (inventory.http.dumping) and load
plans (inventory.http.loading) make of marshmallow's private internals, in
one place: whether a schema has dump or load hooks (`Schema._hooks`), the
schema method a `Method` field calls
(`Method._serialize_method`), and whether a field keeps a base class's
protected implementation (`_serialize`, `_format_num`, `_deserialize`),
which is what decides that a plan reproduces it; and that a field's
`deserialize` is its conversion (`_deserialize`), then its validators, as
a load plan runs them.

Written for marshmallow==4.4.0 (requirements.txt pins it). `check()` (run
by tests/unit/test_private_internals.py) fails with a plain message when an
upgrade moves any of it; tests/unit/http/test_dumping.py then also compares every
plan's output with marshmallow's own.
"""
from marshmallow import Schema, ValidationError, fields, post_dump, pre_dump, pre_load, validates
from marshmallow.decorators import (
    POST_DUMP,
    POST_LOAD,
    PRE_DUMP,
    PRE_LOAD,
    VALIDATES,
    VALIDATES_SCHEMA,
)

from inventory.core.pinned_versions import check_written_for

WRITTEN_FOR = {"marshmallow": "4.4.0"}


def has_dump_hooks(schema):
    """Whether `schema` declares pre_dump or post_dump hooks."""
    return bool(schema._hooks[PRE_DUMP] or schema._hooks[POST_DUMP])


def has_load_hooks(schema):
    """Whether `schema` declares pre_load, post_load or validation hooks."""
    return any(schema._hooks[hook] for hook in (PRE_LOAD, POST_LOAD, VALIDATES,
                                                VALIDATES_SCHEMA))


def method_of(field):
    """The bound schema method a (bound) `Method` field calls, or None."""
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
    class Checked(Schema):
        value = fields.String()

        @validates("value")
        def check_value(self, value, **_kwargs):
            pass

    class Loaded(Schema):
        @pre_load
        def before(self, data, **_kwargs):
            return data
    assert has_load_hooks(Checked()) and has_load_hooks(Loaded()) and not has_load_hooks(plain), \
        f"Schema._hooks no longer lists load and validation hooks by {PRE_LOAD!r}. {advice}."
    def refuse_no(value):
        if value == "no":
            raise ValidationError("no")
    field = fields.String(validate=refuse_no)
    assert field.deserialize("yes") == field._deserialize("yes", None, None) == "yes", \
        f"Field._deserialize is no longer a field's conversion. {advice}."
    try:
        field.deserialize("no")
    except ValidationError:
        pass
    else:
        raise AssertionError(f"Field.deserialize no longer runs `validators`. {advice}.")
    assert field.pre_load == [] and field.post_load == [], \
        f"Field.pre_load/post_load are no longer lists of processors. {advice}."
    for cls, name in ((fields.Field, "_serialize"), (fields.Number, "_format_num"),
                      (fields.Field, "_deserialize")):
        assert callable(getattr(cls, name, None)), f"{cls.__name__}.{name} is gone. {advice}."
