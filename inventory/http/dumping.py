"""Answers dumped by plans derived once from the marshmallow schemas.

The design, and why: docs/design/dumping.md"""
from marshmallow import Schema, fields, missing

from inventory.http.marshmallow_internals import has_dump_hooks, keeps, method_of
from schemas.fields import DumpedAsIs


class NotCompilable(Exception):
    """The schema uses something a plan does not reproduce."""


def _string(value):
    if value.__class__ is str or value is None:
        return value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _integer(value):
    if value.__class__ is int or value is None:
        return value
    return int(value)


def _mapping(keys, values):
    def convert(value):
        if value is None:
            return None
        if keys is None and values is None:
            return dict(value)
        return {(k if keys is None else keys(k)): (v if values is None else values(v))
                for k, v in value.items()}
    return convert


def _listing(inner):
    def convert(value):
        if value is None:
            return None
        return list(value) if inner is None else [inner(each) for each in value]
    return convert


def _nested(dump, many):
    def convert(value):
        if value is None:
            return None
        return [dump(each) for each in value] if many else dump(value)
    return convert


def _converter(field):
    """The function a plan applies to a value of `field` (None: as it is).
    A DumpedAsIs field serializes its value as it is, however nested its schema: so does the plan."""
    if isinstance(field, DumpedAsIs) and keeps(field, DumpedAsIs, "_serialize"):
        return None
    if not (keeps(field, fields.Field, "serialize") and keeps(field, fields.Field, "get_value")):
        raise NotCompilable(f"{type(field).__name__} reads values its own way")
    if isinstance(field, fields.String) and keeps(field, fields.String, "_serialize"):
        return _string
    if isinstance(field, fields.Integer) and keeps(field, fields.Number, "_serialize") \
            and keeps(field, fields.Number, "_format_num") and not field.as_string:
        return _integer
    if isinstance(field, fields.Nested) and keeps(field, fields.Nested, "_serialize"):
        return _nested(_plan(field.schema), bool(field.schema.many or field.many))
    if isinstance(field, fields.List) and keeps(field, fields.List, "_serialize"):
        return _listing(_converter(field.inner))
    if isinstance(field, fields.Mapping) and keeps(field, fields.Mapping, "_serialize"):
        if field.mapping_type is not dict:
            raise NotCompilable(f"a mapping of {field.mapping_type.__name__}")
        return _mapping(field.key_field and _converter(field.key_field),
                        field.value_field and _converter(field.value_field))
    if keeps(field, fields.Field, "_serialize"):  # Raw, Boolean and others that keep values
        return None
    raise NotCompilable(f"{type(field).__name__} serializes its own way")


def _plan(schema):
    """The dump function of one record of a schema instance."""
    if not isinstance(schema, Schema):
        raise NotCompilable("not a schema instance")
    if has_dump_hooks(schema):
        raise NotCompilable("pre_dump/post_dump hooks")
    if type(schema).get_attribute is not Schema.get_attribute or schema.dict_class is not dict:
        raise NotCompilable("records read or made its own way")
    # the class's dump, never the plan that may replace it on this instance
    marshmallow_dump = type(schema).dump.__get__(schema)
    steps = []  # (attribute, key, converter, dump default, method), in key order
    for name, field in schema.dump_fields.items():
        key = field.data_key if field.data_key is not None else name
        if isinstance(field, fields.Method) and keeps(field, fields.Method, "_serialize"):
            # the schema method marshmallow would call (none: no value)
            steps.append((None, key, None, missing, method_of(field)))
            continue
        attribute = field.attribute if field.attribute is not None else name
        if "." in attribute or hasattr(dict, attribute):
            raise NotCompilable(f"{attribute!r} is not a plain key of a dict")
        steps.append((attribute, key, _converter(field), field.dump_default, None))
    attributes = frozenset(step[0] for step in steps if step[0] is not None)
    return _generated(steps, attributes, marshmallow_dump)


# What a converter's call can be replaced by in the generated source: the
# value as it is when it already has the converter's result type.
_INLINED = {_string: "str", _integer: "int"}


def _generated(steps, attributes, marshmallow_dump):
    """The plan's dump function, written out as Python source, one
    statement per field in key order, and compiled: a loop over the steps
    reads each step's five parts and asks three questions of each field
    that the source answers once, here (about half a list page's dump)."""
    names = {"missing": missing, "marshmallow_dump": marshmallow_dump, "plain_types": {dict: True},
             "attributes": attributes}
    lines = ["def dump(obj):",
             "    kind = obj.__class__",
             "    plain = plain_types.get(kind)",
             "    if plain is None:  # a dict subclass: its class attributes must not shadow a key",
             "        plain = plain_types[kind] = isinstance(obj, dict) and not any(",
             "            hasattr(kind, attribute) for attribute in attributes)",
             "    if not plain:",
             "        return marshmallow_dump(obj, many=False)",
             "    get = obj.get",
             "    out = {}"]
    for number, (attribute, key, convert, default, method) in enumerate(steps):
        if attribute is None:  # a Method field: no method means no value
            if method is None:
                continue
            names[f"method_{number}"] = method
            lines.append(f"    value = method_{number}(obj)")
        else:
            lines.append(f"    value = get({attribute!r}, missing)")
            if default is not missing:
                names[f"default_{number}"] = default
                lines.append("    if value is missing:")
                lines.append(f"        value = default_{number}()" if callable(default)
                             else f"        value = default_{number}")
        if convert is None:
            stored = "value"
        elif convert in _INLINED:
            names[f"convert_{number}"] = convert
            stored = (f"value if value.__class__ is {_INLINED[convert]} or value is None "
                      f"else convert_{number}(value)")
        else:
            names[f"convert_{number}"] = convert
            stored = f"convert_{number}(value)"
        lines.append("    if value is not missing:")
        lines.append(f"        out[{key!r}] = {stored}")
    lines.append("    return out")
    exec(compile("\n".join(lines), "<inventory.http.dumping plan>", "exec"), names)  # noqa: S102
    return names["dump"]


def compiled_dump(schema):
    """A drop-in for `schema.dump`, or None when the schema cannot have a plan."""
    try:
        plan = _plan(schema)
    except NotCompilable:
        return None

    def dump(obj, *, many=None):
        many = schema.many if many is None else bool(many)
        if many and obj is not None:
            return [plan(each) for each in obj]
        return plan(obj)
    return dump
