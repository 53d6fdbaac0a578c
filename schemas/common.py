"""Bases shared by every resource schema: bodies with `$schema`, audit fields,
list arguments and envelopes, and the error body."""
from functools import cached_property

from flask import g
from marshmallow import Schema, fields, missing, pre_load, validate

from inventory.schema_urls import describe

DEFAULT_LIMIT = 20
MAX_LIMIT = 100


class BodySchema(Schema):
    """A top-level JSON body: carries `$schema` and ignores it, and every other
    read-only field, on input, so a client can send back what it read."""

    SCHEMA_NAME = None  # the name under /schemas/, set by each body schema

    schema_url = fields.Method("_schema_url", data_key="$schema", dump_only=True,
                               metadata={"type": "string", "format": "uri",
                                         "description": "URL of the JSON Schema of this body.",
                                         "readOnly": True})

    def _schema_url(self, _obj):
        # Only the outermost body names its schema: records inside a list
        # envelope are dumped after the envelope's own `$schema` and omit it.
        if g.get("described_by"):
            return missing
        return describe(self.SCHEMA_NAME)

    @pre_load
    def drop_read_only(self, data, **_kwargs):
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in self._read_only_keys}
        return data

    @cached_property
    def _read_only_keys(self):
        return frozenset(f.data_key or name for name, f in self.fields.items() if f.dump_only)


def audit_fields():
    """The four read-only audit fields; a schema lists them last:
    `created_by, created_on, last_modified_by, last_modified_on = audit_fields()`."""
    by = "Name of the caller who {} the record; set by the server."
    on = "When the record was {} (RFC 3339, UTC); set by the server."
    return (fields.String(dump_only=True, metadata={"description": by.format("created")}),
            fields.String(dump_only=True, metadata={"format": "date-time",
                                                    "description": on.format("created")}),
            fields.String(dump_only=True, metadata={"description": by.format("last modified")}),
            fields.String(dump_only=True, metadata={"format": "date-time",
                                                    "description": on.format("last modified")}))


class PaginationSchema(Schema):
    continue_ = fields.String(
        data_key="continue", required=True,
        metadata={"description": "Token for the next page (the `continue` query "
                  "parameter); empty on the last page."})


def envelope(name, item_schema):
    """The list envelope schema class `{name}Schema` for `item_schema` records."""
    return type(f"{name}Schema", (BodySchema,), {
        "SCHEMA_NAME": name,
        "results": fields.List(fields.Nested(item_schema), required=True),
        "pagination": fields.Nested(PaginationSchema, required=True),
    })


FILTER_DESCRIPTION = """Record filter, a subset of Google AIP-160:
comparisons `field op value` with op one of `= != < <= > >= :`, joined by
`AND` (binds tighter) and `OR`, negated by `NOT`, grouped by parentheses.
Fields are the listed resource's fields, dotted for nesting
(`control_plane.provider`, `labels.team`). Values are "quoted strings",
numbers, `true` or `false`; a string ending in `*` matches by prefix (`\\*`
for a literal star). `labels:team` asks whether a label exists. Versions
compare as versions (`version<"1.30"`), timestamps as RFC 3339 instants,
`scanned_on` as an integer. At most 2,000 characters, 32 comparisons and 32 levels of
nesting. Examples: `environment="production" AND version<"1.30"`,
`title="Acme*"`, `NOT labels:team`."""


class ListArgsSchema(Schema):
    limit = fields.Integer(
        load_default=0, validate=validate.Range(min=0, max=MAX_LIMIT),
        metadata={"description": f"Page size, 0 to {MAX_LIMIT}; 0 or absent means "
                  f"{DEFAULT_LIMIT}."})
    continue_ = fields.String(
        data_key="continue", load_default=None, validate=validate.Length(max=2048),
        metadata={"description": "The `pagination.continue` of the previous page. "
                  "Valid only with the same list and `filter`."})
    filter = fields.String(
        load_default=None, validate=validate.Length(max=2000),
        metadata={"description": FILTER_DESCRIPTION,
                  "examples": ['environment="production" AND version<"1.30"',
                               'control_plane.provider="eks"', "labels:team",
                               'title="Acme*"', "scanned_on>=1763800000"]})


class DeleteArgsSchema(Schema):
    force = fields.Boolean(
        load_default=False, truthy={"true"}, falsy={"false"},
        metadata={"description": "Also delete everything below the record."})


class ErrorDetailSchema(Schema):
    location = fields.String(metadata={"description": "Where the problem lies, e.g. "
                                       "`body.name`, `query.limit`, `path.cluster`."})
    message = fields.String()
    value = fields.Raw(metadata={"description": "The offending value."})


class ErrorSchema(BodySchema):
    """The error body of every failed request (`application/problem+json`)."""

    SCHEMA_NAME = "Error"
    status = fields.Integer()
    title = fields.String()
    detail = fields.String()
    type = fields.String(metadata={"format": "uri"})
    instance = fields.String(metadata={"format": "uri"})
    errors = fields.List(fields.Nested(ErrorDetailSchema))


class HealthSchema(BodySchema):
    """The answer of /healthz and /readyz."""

    SCHEMA_NAME = "Health"
    status = fields.String(metadata={"description": "`ok`.", "examples": ["ok"]})
