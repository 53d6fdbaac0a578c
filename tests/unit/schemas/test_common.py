"""The bases every resource schema shares (schemas/common.py): a body names
its schema in `$schema` unless nested in a list; read-only fields are
accepted and dropped on input; `request_schema` derives what a client sends
from what the server sends (required fields only on a create, defaults
filled fresh, immutable fields accepted, overrides); the list envelope; the
list arguments' bounds; `force` takes `true` or `false` only."""
import pytest
from marshmallow import ValidationError, fields

from inventory.core.ordering import Orderings
from schemas.common import (
    MAX_CONTINUE,
    MAX_LIMIT,
    BodySchema,
    DeleteArgsSchema,
    audit_fields,
    envelope,
    list_args,
    request_schema,
)


def _url(name):
    return f"https://inventory.example/schemas/{name}.json"


class ThingSchema(BodySchema):
    """What the server sends of a thing, for these tests."""

    SCHEMA_NAME = "Thing"
    schema_urls = staticmethod(_url)
    name = fields.String(required=True)
    colour = fields.String(required=True, metadata={"description": "Its colour."})
    tags = fields.Dict(required=True)
    kind = fields.String(required=True)
    id = fields.String(dump_only=True, required=True, metadata={"description": "Made here."})
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


ThingCreateSchema = request_schema(ThingSchema, "ThingCreate", required=("name", "kind"),
                                   defaults={"colour": "", "tags": dict})
ThingPatchSchema = request_schema(ThingSchema, "ThingPatch", change=True, immutable=("kind",),
                                  required=("name",),  # a create's: a change requires none
                                  overrides={"tags": fields.Dict(allow_none=True)})


def test_a_body_names_its_schema_unless_it_is_a_lists_record():
    thing = {"name": "a", "colour": "red", "tags": {}, "kind": "k", "id": "t1"}
    assert ThingSchema().dump(thing)["$schema"] == _url("Thing")
    assert "$schema" not in ThingSchema(nested=True).dump(thing)


def test_read_only_fields_sent_back_are_dropped_not_refused():
    read = {"name": "a", "colour": "red", "tags": {}, "kind": "k", "id": "t1",
            "created_by": "x", "$schema": _url("Thing")}
    assert ThingSchema().load(read) == {"name": "a", "colour": "red", "tags": {}, "kind": "k"}
    assert ThingCreateSchema().load(read) == {"name": "a", "colour": "red", "tags": {},
                                              "kind": "k"}
    with pytest.raises(ValidationError) as refused:  # an unknown field is not read-only
        ThingCreateSchema().load({"name": "a", "kind": "k", "size": 3})
    assert "size" in refused.value.messages


def test_a_create_needs_its_required_fields_and_gets_fresh_defaults():
    with pytest.raises(ValidationError) as refused:
        ThingCreateSchema().load({"colour": "red"})
    assert set(refused.value.messages) == {"name", "kind"}
    first = ThingCreateSchema().load({"name": "a", "kind": "k"})
    assert first == {"name": "a", "kind": "k", "colour": "", "tags": {}}
    second = ThingCreateSchema().load({"name": "b", "kind": "k"})
    assert second["tags"] is not first["tags"]  # a default made anew for each body
    shown = ThingCreateSchema().fields["colour"].metadata["description"]
    assert shown == "Its colour. Empty when absent."


def test_a_change_requires_nothing_defaults_nothing_and_takes_its_overrides():
    assert ThingPatchSchema().load({}) == {}
    assert ThingPatchSchema().load({"tags": None}) == {"tags": None}  # the override's rule
    with pytest.raises(ValidationError):
        ThingCreateSchema().load({"name": "a", "kind": "k", "tags": None})
    # an immutable field is accepted (the store compares it with the stored value)
    assert ThingPatchSchema().load({"kind": "k"}) == {"kind": "k"}
    assert ThingPatchSchema().fields["kind"].metadata["readOnly"] is True
    assert ThingPatchSchema.SCHEMA_NAME == "ThingPatch"
    assert "change a Thing" in ThingPatchSchema.__doc__


def test_the_audit_fields_are_read_only_and_always_sent():
    assert all(field.dump_only and field.required for field in audit_fields())


def test_an_envelope_lists_records_without_their_own_schema_and_a_continuation():
    ThingList = envelope("ThingList", ThingSchema)
    ThingList.schema_urls = staticmethod(_url)
    page = ThingList().dump({"results": [{"name": "a", "colour": "", "tags": {}, "kind": "k",
                                          "id": "t1"}],
                             "pagination": {"continue_": "next"}})
    assert page["$schema"] == _url("ThingList")
    assert "$schema" not in page["results"][0]
    assert page["pagination"] == {"continue": "next"}
    assert ThingList().fields["results"].metadata["maxItems"] == MAX_LIMIT


def test_list_arguments_are_bounded():
    args = list_args("Things", ["name=\"a\""], Orderings.of("name"))()
    assert args.load({"limit": "0", "continue": "", "format": "csv"}) == {
        "limit": 0, "continue_": "", "format_": "csv"}
    for bad in ({"limit": str(MAX_LIMIT + 1)}, {"limit": "-1"}, {"limit": "ten"},
                {"continue": "x" * (MAX_CONTINUE + 1)}, {"format": "xml"},
                {"filter": "x" * 100_000}):
        with pytest.raises(ValidationError):
            args.load(bad)


def test_force_is_true_or_false_and_false_when_absent():
    assert DeleteArgsSchema().load({}) == {"force": False}
    assert DeleteArgsSchema().load({"force": "true"}) == {"force": True}
    for bad in ("1", "yes", "True"):
        with pytest.raises(ValidationError):
            DeleteArgsSchema().load({"force": bad})
