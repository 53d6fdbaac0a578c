"""Nested parts of request bodies loaded by plans derived once from the
marshmallow schemas, as answers are dumped by plans (inventory.http.dumping).

A plan takes a body part only where marshmallow would take it, and gives
what marshmallow would give; on anything else (a missing required field, a
null, a wrong type, a key it does not know, a validator's refusal) it
defers, and marshmallow loads the part again, wording the errors. So a
plan never needs to word an error: it needs to say yes only where
marshmallow does, and that is what tests/unit/http/test_loading.py checks
against marshmallow itself, body by body.

Why: a typical agent's scan (a dozen node versions, a few deprecated APIs,
findings) is some 60 nested fields, and marshmallow's per-field machinery
was the largest part of the scan's POST (bench/observations.py).

Only nested schemas are planned (`Nested`, a `List` of them, a `Dict`
inside them): the body's own schema keeps its hooks (`$schema` and
read-only fields dropped) and marshmallow runs it as before."""
from marshmallow import RAISE, Schema, ValidationError, fields, missing

from inventory.http.marshmallow_internals import has_load_hooks, keeps


class NotPlanned(Exception):
    """The schema or field uses something a plan does not reproduce."""


class _Defer(Exception):  # noqa: N818 (not an error: marshmallow takes over)
    """This part is marshmallow's to load (and to word its errors)."""


# Leaves whose conversion reads the value alone (never the object around it)
_LEAVES = (fields.String, fields.Number, fields.Boolean)


def _leaf(field, name):
    """The loader of a field's present, non-null value: the field's own
    conversion, then its validators, as Field.deserialize runs them."""
    if not isinstance(field, _LEAVES):
        raise NotPlanned(f"{name}: a {type(field).__name__}")
    if field.pre_load or field.post_load:
        raise NotPlanned(f"{name}: field processors")
    convert, validators = field._deserialize, tuple(field.validators)

    def load(value):
        try:
            value = convert(value, name, None)
            for validator in validators:  # (marshmallow 4 heeds their errors only)
                validator(value)
        except ValidationError:
            raise _Defer from None
        return value
    return load


def _checked(field, load, name):
    """`load`, followed by the field's own validators (a List's or a Dict's bound)."""
    if field.pre_load or field.post_load:
        raise NotPlanned(f"{name}: field processors")
    validators = tuple(field.validators)
    if not validators:
        return load

    def checked(value):
        value = load(value)
        try:
            for validator in validators:
                validator(value)
        except ValidationError:
            raise _Defer from None
        return value
    return checked


def _loader(field, name, checked=True):
    """The loader of a field's present, non-null value (`checked`: with
    the field's own validators)."""
    checked = _checked if checked else (lambda field, load, name: load)
    if isinstance(field, fields.Nested) and keeps(field, fields.Nested, "_deserialize") \
            and not field.many and field.unknown in (None, RAISE):
        return checked(field, _schema_loader(field.schema), name)
    if isinstance(field, fields.List) and keeps(field, fields.List, "_deserialize"):
        item = _value_loader(field.inner, name)

        def listed(value):
            if value.__class__ is not list:
                raise _Defer
            return [item(each) for each in value]
        return checked(field, listed, name)
    if isinstance(field, fields.Mapping) and keeps(field, fields.Mapping, "_deserialize") \
            and field.mapping_type is dict and field.key_field is not None \
            and field.value_field is not None:
        key, value_of = _value_loader(field.key_field, name), \
            _value_loader(field.value_field, name)

        def mapped(value):
            if value.__class__ is not dict:
                raise _Defer
            return {key(k): value_of(v) for k, v in value.items()}
        return checked(field, mapped, name)
    return _leaf(field, name)


def _value_loader(field, name):
    """The loader of a list's item or a map's key or value: present, and
    null only where the field allows it."""
    load = _loader(field, name)
    allow_none = field.allow_none

    def value(each):
        if each is None:
            if allow_none:
                return None
            raise _Defer
        return load(each)
    return value


def _schema_loader(schema):
    """The loader of one object of a schema without load hooks, its unknown
    keys refused (marshmallow's RAISE)."""
    if not isinstance(schema, Schema) or schema.many or schema.unknown != RAISE:
        raise NotPlanned("not a single object refusing unknown keys")
    if has_load_hooks(schema):
        raise NotPlanned("load hooks")
    if schema.dict_class is not dict:
        raise NotPlanned("records made its own way")
    steps, known = [], set()
    for name, field in schema.load_fields.items():
        key = field.data_key if field.data_key is not None else name
        attribute = field.attribute if field.attribute is not None else name
        if "." in attribute:
            raise NotPlanned(f"{attribute!r} is not a plain key")
        known.add(key)
        steps.append((key, attribute, field.required, field.allow_none, field.load_default,
                      _loader(field, name)))
    known = frozenset(known)

    def load(value):
        if value.__class__ is not dict or not known.issuperset(value):
            raise _Defer
        out = {}
        get = value.get
        for key, attribute, required, allow_none, default, load_value in steps:
            each = get(key, missing)
            if each is missing:
                if required:
                    raise _Defer
                if default is missing:
                    continue
                out[attribute] = default() if callable(default) else default
            elif each is None:
                if not allow_none:
                    raise _Defer
                out[attribute] = None
            else:
                out[attribute] = load_value(each)
        return out
    return load


def plan_nested_loads(schema):
    """Give each Nested (or List of Nested) field of `schema`, an instance
    of its own (an operation's), a plan as its conversion; marshmallow runs
    the rest of the field (null, required, its own validators) and the
    schema as before. The fields a plan cannot reproduce are left as they are."""
    for name, field in schema.load_fields.items():
        planned = isinstance(field, fields.Nested) or (
            isinstance(field, fields.List) and isinstance(field.inner, fields.Nested))
        if not planned or "_deserialize" in vars(field):
            continue
        try:
            plan = _loader(field, name, checked=False)
        except NotPlanned:
            continue
        field._deserialize = _with_plan(plan, field._deserialize)


def _with_plan(plan, marshmallows):
    def _deserialize(value, attr, data, partial=None, **kwargs):
        if partial is None and not kwargs:
            try:
                return plan(value)
            except _Defer:
                pass
        return marshmallows(value, attr, data, partial=partial, **kwargs)
    return _deserialize
