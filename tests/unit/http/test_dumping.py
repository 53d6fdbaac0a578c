"""Answers dumped by compiled plans (inventory.http.dumping) are exactly what
marshmallow's own `dump` of the same schema makes: same keys, same order,
same values, for records as the store makes them and for any values at all."""
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import Schema, fields

from inventory.http.dumping import compiled_dump
from inventory.store.pages import PageRequest
from inventory.store.records import Record


def marshmallow_dump(schema, obj):
    """What marshmallow itself makes of `obj` with this very schema instance."""
    return type(schema).dump(schema, obj)


def exact(value):
    """`value` with its types and key order made comparable (1 vs True vs 1.0)."""
    if isinstance(value, dict):
        return ("dict", [(key, exact(inner)) for key, inner in value.items()])
    if isinstance(value, list):
        return ("list", [exact(inner) for inner in value])
    return (type(value).__name__, value)


def same(plan_output, reference):
    assert exact(plan_output) == exact(reference)


def test_every_answer_with_a_body_is_dumped_by_a_plan(app, response_schemas):
    schemas = response_schemas(app)
    assert len(schemas) >= 20
    slow = [where for where, schema in schemas.items() if "dump" not in vars(schema)]
    assert not slow, f"answers dumped by marshmallow itself: {slow}"


def test_real_answers_equal_marshmallow_dumps(app, client, inventory, response_schemas):
    cluster = inventory.cluster(labels={"team": "a", "tier": "1"})
    client.post(f"/kubeclusters/{cluster['name']}/scans", json={"scanned_on": 1_700_000_000})
    store = app.extensions["inventory.store"]
    records = {
        "organizations": store.organizations.list(PageRequest(10)).records,
        "platforms": store.platforms.list(PageRequest(10)).records,
        "clusters": store.clusters.list(PageRequest(10)).records,
    }
    assert all(isinstance(r, Record) for rs in records.values() for r in rs)
    with app.test_request_context("/", base_url="http://localhost/"):
        for (method, rule, status), schema in response_schemas(app).items():
            resource = rule.split("/")[1].removeprefix("kube") or "organizations"
            for record in records.get(resource, []):
                same(schema.dump(record), marshmallow_dump(schema, record))
            envelope = {"results": [r for rs in records.values() for r in rs],
                        "pagination": {"continue_": "x"}}
            try:
                reference = marshmallow_dump(schema, envelope)
            except Exception as exc:  # noqa: BLE001 - the plan must fail alike
                with pytest.raises(type(exc)):
                    schema.dump(envelope)
            else:
                same(schema.dump(envelope), reference)


SCALARS = st.one_of(st.none(), st.text(max_size=5), st.integers(-10, 10), st.booleans(),
                    st.floats(allow_nan=False, allow_infinity=False), st.binary(max_size=3))


def values_for(field, depth=0):
    """Any value at all for `field`, mostly of the kind it expects."""
    if isinstance(field, fields.Nested) and depth < 3:
        record = records_for(field.schema, depth + 1)
        return st.one_of(st.none(), st.lists(record, max_size=3) if field.many else record)
    if isinstance(field, fields.List) and depth < 3:
        return st.one_of(st.none(), st.lists(values_for(field.inner, depth + 1), max_size=3))
    if isinstance(field, fields.Mapping):
        return st.one_of(st.none(), st.dictionaries(st.text(max_size=3), SCALARS, max_size=3))
    return SCALARS


def records_for(schema, depth=0):
    """Dicts with any subset of `schema`'s keys (and some it does not know)."""
    keys = {field.attribute or name: values_for(field, depth)
            for name, field in schema.dump_fields.items()}
    return st.fixed_dictionaries({}, optional={**keys, "unknown": SCALARS})


@pytest.fixture(scope="module")
def schemas_by_answer(response_schemas):
    from app import create_app
    from inventory.config import Config
    app = create_app(Config(TESTING=True))
    return app, response_schemas(app)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_record_dumps_as_marshmallow_dumps_it(schemas_by_answer, data):
    app, schemas = schemas_by_answer
    where = data.draw(st.sampled_from(sorted(schemas, key=str)))
    schema = schemas[where]
    record = data.draw(records_for(schema))
    if data.draw(st.booleans()):
        record = Record(record)
    with app.test_request_context("/", base_url="http://localhost/"):
        try:
            reference = marshmallow_dump(schema, record)
        except Exception as exc:  # noqa: BLE001 - the plan must fail alike
            with pytest.raises(type(exc)):
                schema.dump(record)
            return
        same(schema.dump(record), reference)


class Defaults(Schema):
    constant = fields.String(dump_default="x")
    made = fields.Integer(dump_default=lambda: 7)
    renamed = fields.String(data_key="other", attribute="source")


class Shadowing(dict):
    constant = "from the class"  # marshmallow reads a missing key as this attribute


@pytest.mark.parametrize("record", [
    {}, {"constant": None, "made": "8", "source": 5},
    Shadowing(), Shadowing(made=1),
])
def test_defaults_renames_and_dict_subclasses_follow_marshmallow(record):
    schema = Defaults()
    same(compiled_dump(schema)(record), schema.dump(record))



# Names the generated source uses itself, and keys no identifier or plain
# string literal could hold: a plan writes keys and attributes as literals.
HOSTILE_NAMES = ["out", "value", "obj", "kind", "missing", "plain", "plain_types", "attributes",
                 "marshmallow_dump", "convert_0", "default_1", "method_2", "str", "int", "dump",
                 "a'b", 'a"b', "a\\b", "a\nb", "a\rb", "\u00e9t\u00e9", "\U0001f600", "\u2028",
                 "\x00", "'''", '"""', "\\", "x')\nimport os\n('", "{}", "%s", "\ud800"]


def hostile_schema():
    attrs = {}
    for number, name in enumerate(HOSTILE_NAMES):
        kind = (fields.String, fields.Integer, fields.Raw, fields.List)[number % 4]
        field = kind(fields.String()) if kind is fields.List else kind()
        field.attribute, field.data_key = name, name + "_key"
        attrs[f"field_{number}"] = field
    attrs["method"] = fields.Method("shown", data_key="get")
    attrs["shown"] = lambda self, obj: obj.get("out")
    attrs["quoted"] = fields.String(attribute="fallback", dump_default="d'\"\\\n", data_key="missing")
    attrs["made"] = fields.Integer(attribute="made_", dump_default=lambda: 3, data_key="obj")
    return type("Hostile", (Schema,), attrs)()


@pytest.mark.parametrize("record", [
    {}, dict.fromkeys(HOSTILE_NAMES, "v"), dict.fromkeys(HOSTILE_NAMES, 7),
    dict.fromkeys(HOSTILE_NAMES), dict.fromkeys(HOSTILE_NAMES, True),
    {**{name: ["a", 1] for name in HOSTILE_NAMES}, "out": "x"},
    dict.fromkeys(HOSTILE_NAMES, b"b")])
def test_keys_and_attributes_the_source_could_misread_dump_as_marshmallow_dumps(record):
    schema = hostile_schema()
    dump = compiled_dump(schema)
    assert dump is not None
    try:
        reference = marshmallow_dump(schema, record)
    except Exception as exc:  # noqa: BLE001 - the plan must fail alike
        with pytest.raises(type(exc)):
            dump(record)
        return
    same(dump(record), reference)


def test_a_method_field_dumps_what_marshmallow_calls_it_for():
    """A plan calls the field as marshmallow does: a method's value, or
    no key at all for a Method with no method to call."""
    class Methods(Schema):
        none = fields.Method()
        named = fields.Method("shown", data_key="shown_as")

        def shown(self, obj):
            return obj["x"]
    schema = Methods()
    dump = compiled_dump(schema)
    assert dump({"x": 1}) == {"shown_as": 1}
    same(dump({"x": 1}), marshmallow_dump(schema, {"x": 1}))


class WithHook(Schema):
    value = fields.String()

    from marshmallow import post_dump

    @post_dump
    def shout(self, data, **_kwargs):
        return {k: v.upper() for k, v in data.items()}


class Dotted(Schema):
    inner = fields.String(attribute="a.b")


class Custom(fields.Field):
    def _serialize(self, value, attr, obj, **kwargs):
        return "custom"


@pytest.mark.parametrize("schema", [WithHook(), Dotted(), type(
    "CustomSchema", (Schema,), {"value": Custom()})()])
def test_what_a_plan_cannot_reproduce_keeps_marshmallows_dump(schema):
    assert compiled_dump(schema) is None
