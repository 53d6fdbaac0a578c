"""Bases shared by every resource schema: bodies with `$schema`, the request
variants derived from a response schema, audit fields, list arguments and
envelopes, and the error body.

Each resource's shape is written once, as the schema of what the server
sends (every field it always sends is required). What a client sends is
derived from it by `request_schema`: the same fields and rules, with the
read-only ones accepted and ignored (a client may send back what it read),
and, for a change, nothing required and no defaults (absent means unchanged).
"""
import copy
from functools import cached_property

from marshmallow import Schema, fields, missing, post_load, pre_load, validate

from inventory.core.caps import MAX_CSV_ROWS, MAX_ENTRIES
from inventory.core.filtering import MAX_DEPTH as MAX_FILTER_DEPTH
from inventory.core.filtering import MAX_LENGTH as MAX_FILTER_LENGTH
from inventory.core.filtering import MAX_TERMS as MAX_FILTER_TERMS
from inventory.core.ordering import MAX_ORDER_BY
from inventory.store.pages import MAX_EXAMINED
from schemas.fields import MAX_SAFE_INTEGER, WholeNumber

DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_CONTINUE = 2048


def schema_url_field(required=False, url_format="uri"):
    return fields.Method("_schema_url", data_key="$schema", dump_only=True, required=required,
                         metadata={"type": "string", "format": url_format,
                                   "description": "URL of the JSON Schema of this body; "
                                   "records inside a list do not repeat it."})


class BodySchema(Schema):
    """A JSON body that names its schema in `$schema` when it is the whole
    answer. A list envelope makes its records with `nested=True`: they leave
    `$schema` to the envelope."""

    SCHEMA_NAME = None  # the name under /schemas/, set by each body schema
    # The URL of a schema's name (for this request's host), handed in by the
    # HTTP layer that makes it (inventory.http.schema_urls): schemas import
    # nothing of HTTP.
    schema_urls = None
    IGNORED = frozenset()  # keys accepted on input and dropped (read-only fields)

    schema_url = schema_url_field()

    def __init__(self, *args, nested=False, **kwargs):
        super().__init__(*args, **kwargs)
        self.nested = nested

    def _schema_url(self, _obj):
        return missing if self.nested else self.schema_urls(self.SCHEMA_NAME)

    @pre_load
    def drop_ignored(self, data, **_kwargs):
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in self._ignored_keys}
        return data

    @cached_property
    def _ignored_keys(self):
        return self.IGNORED | {f.data_key or name for name, f in self.fields.items()
                               if f.dump_only}


def _variant(field, **attributes):
    """A copy of `field` with some of its attributes changed."""
    field = copy.deepcopy(field)
    field.metadata = dict(field.metadata)
    for name, value in attributes.items():
        setattr(field, name, value)
    return field


def request_schema(response, name, *, required=(), defaults=None, immutable=(),
                   change=False, overrides=None, example=None):
    """The schema of what a client sends, derived from `response` (the
    schema of what the server sends) as the module docstring says.

    `required`: the fields a create must have; `defaults`: what absent
    fields of a create become (said in their descriptions); `immutable`:
    fields a change may repeat but not alter; `change`: a partial update
    (nothing required, no defaults); `overrides`: fields whose input rules
    differ (labels a change may null); `example`: a body to show (the
    document's `example`, where Swagger UI's Try-it-out starts)."""
    declared, ignored = {}, set()
    for field_name, field in response._declared_fields.items():
        if field_name in (overrides or {}):
            declared[field_name] = overrides[field_name]
            continue
        if field.dump_only:  # whatever is sent here is dropped, so anything is accepted
            ignored.add(field.data_key or field_name)
            text = field.metadata.get("description", "")
            declared[field_name] = fields.Raw(
                data_key=field.data_key, allow_none=True,
                metadata={"description": f"{text} Read-only: ignored if sent.".strip()})
            continue
        default = (defaults or {}).get(field_name, missing)
        if field_name in immutable:
            text = field.metadata.get("description", "")
            declared[field_name] = _variant(
                field, required=False, load_default=missing,
                metadata={**field.metadata, "readOnly": True,
                          "description": f"{text} Cannot change: accepted only with its "
                          "current value.".strip()})
        else:
            metadata = dict(field.metadata)
            if default is not missing:
                shown = "empty" if default in ("", dict) else "null"
                metadata["description"] = (f"{metadata.get('description', '')} "
                                           f"{shown.capitalize()} when absent.").strip()
            declared[field_name] = _variant(
                field, required=field_name in required and not change,
                load_default=missing, metadata=metadata)

    @post_load
    def fill_defaults(self, data, **_kwargs):
        # here rather than as load_default: the document then shows no
        # `default`, which generated clients read as "always present"
        for field_name, default in (defaults or {}).items():
            if field_name not in data:
                data[field_name] = default() if callable(default) else default
        return data
    return type(f"{name}Schema", (BodySchema,), {
        **declared, "SCHEMA_NAME": name, "IGNORED": frozenset(ignored),
        "fill_defaults": fill_defaults, "EXAMPLE": example,
        "__doc__": f"What a client sends to {'change' if change else 'make'} "
                   f"a {response.SCHEMA_NAME}."})


def audit_fields():
    """The four read-only audit fields; a schema lists them last:
    `created_by, created_on, last_modified_by, last_modified_on = audit_fields()`."""
    by = "Name of the caller who {} the record; set by the server."
    on = "When the record was {} (RFC 3339, UTC); set by the server."
    return (fields.String(dump_only=True, required=True,
                          metadata={"description": by.format("created")}),
            fields.String(dump_only=True, required=True,
                          metadata={"format": "date-time", "description": on.format("created")}),
            fields.String(dump_only=True, required=True,
                          metadata={"description": by.format("last modified")}),
            fields.String(dump_only=True, required=True,
                          metadata={"format": "date-time",
                                    "description": on.format("last modified")}))


class PaginationSchema(Schema):
    continue_ = fields.String(
        data_key="continue", required=True,
        metadata={"description": "Token for the next page (the `continue` query "
                  "parameter); empty on the last page. A page may be short, even empty, "
                  "and still have one: only an empty `continue` means the end."})


def envelope(name, item_schema):
    """The list envelope schema class `{name}Schema` for `item_schema` records."""
    return type(f"{name}Schema", (BodySchema,), {
        "SCHEMA_NAME": name,
        "schema_url": schema_url_field(required=True),
        "results": fields.List(fields.Nested(item_schema(nested=True)), required=True,
                               metadata={"maxItems": MAX_LIMIT}),
        "pagination": fields.Nested(PaginationSchema, required=True),
    })


FILTER_DESCRIPTION = f"""Record filter, a subset of Google AIP-160:
comparisons `field op value` with op one of `= != < <= > >= :`, joined by
`AND` (binds tighter) and `OR`, negated by `NOT`, grouped by parentheses.
Fields are the listed resource's fields, dotted for nesting. Values are
"quoted strings", numbers, `true` or `false`; a string ending in `*` matches
by prefix (`\\*` for a literal star). `labels:team` asks whether a label
exists; a label key with a `.` or `/` is quoted:
`labels."app.kubernetes.io/name"="api"`. Versions compare as versions
(`version<"1.30"`), timestamps as RFC 3339 instants, integers as integers.
At most {MAX_FILTER_LENGTH:,} characters, {MAX_FILTER_TERMS} comparisons and NOTs in all
and {MAX_FILTER_DEPTH} levels of nesting. A filtered page examines at most
{MAX_EXAMINED:,} records, so it may be short: follow `continue` until it is empty."""


ORDER_BY_DESCRIPTION = """Order of the results (Google AIP-132): fields
separated by commas, each optionally followed by `desc`. This list can be
ordered by {orderings}. Ties are broken by the record's key; absent, the
list is in key order. Versions sort as versions, timestamps as instants,
and a missing value (`last_scanned_on` before the first scan) first, or
last with `desc`; but a missing support date (none known or announced)
after every date, or first with `desc`. A page costs the same at any depth."""


def limit_field():
    return WholeNumber(
        text=True, validate=validate.Range(min=0, max=MAX_LIMIT),
        metadata={"default": DEFAULT_LIMIT,
                  "description": f"Page size, 0 to {MAX_LIMIT}; 0 or absent means "
                                 f"{DEFAULT_LIMIT}."})


def continue_field():
    return fields.String(
        data_key="continue", validate=validate.Length(max=MAX_CONTINUE),
        metadata={"description": "The `pagination.continue` of the previous page; "
                  "empty or absent for the first. Valid only with the same list, "
                  "`filter` and caller."})


def format_field():
    """`format`: `csv` answers the whole match as CSV (inventory.http.csv_export)."""
    return fields.String(
        data_key="format", validate=validate.OneOf(["json", "csv"]),
        metadata={"description": "`csv`: the whole match from `continue` on (`limit` aside), "
                  "as `text/csv`, streamed, in the list's order, with a header row of the "
                  "record's flattened fields (`support.status`, `labels.team`); past "
                  f"{MAX_CSV_ROWS:,} records, a 422 before the first byte. `json`: the page. "
                  "Absent: `Accept` decides (`text/csv` preferred to JSON means CSV); given, "
                  "it wins over `Accept`."})


def filter_field(examples, description=FILTER_DESCRIPTION):
    return fields.String(validate=validate.Length(max=MAX_FILTER_LENGTH),
                         metadata={"description": description, "examples": examples})


def order_by_field(orderings):
    """`order_by`, among `orderings` (inventory.core.ordering.Orderings)."""
    return fields.String(
        validate=validate.Length(max=MAX_ORDER_BY),
        metadata={"description": ORDER_BY_DESCRIPTION.format(
            orderings=orderings.describe()).replace("\n", " "),
            "examples": orderings.examples()})


def list_args(name, filter_examples, orderings):
    """The query arguments of one list, with filter examples that list
    accepts, and the orderings (inventory.core.ordering.Orderings) it serves."""
    return type(f"{name}ArgsSchema", (Schema,), {
        "limit": limit_field(),
        "continue_": continue_field(),
        "filter": filter_field(filter_examples),
        "order_by": order_by_field(orderings),
        "format_": format_field(),
    })


class DeleteArgsSchema(Schema):
    force = fields.Boolean(
        load_default=False, truthy={"true"}, falsy={"false"},
        metadata={"description": "Also delete everything below the record."})


class ErrorDetailSchema(Schema):
    location = fields.String(required=True, metadata={
        "description": "Where the problem lies, e.g. `body.name`, `query.limit`, "
                       "`path.cluster`, `header.if-match`."})
    message = fields.String(required=True)
    value = fields.Raw(required=True, allow_none=True,
                       metadata={"description": "The offending value (shortened when long)."})


class ErrorSchema(BodySchema):
    """The error body of every failed request (`application/problem+json`)."""

    SCHEMA_NAME = "Error"
    # relative (`/schemas/Error.json`) where the host is not known or not
    # allowed: the server layer's answers, a forged Host's 400
    schema_url = schema_url_field(required=True, url_format="uri-reference")
    status = WholeNumber(required=True, metadata={"format": "int32", "minimum": 100,
                                                  "maximum": 599})
    title = fields.String(required=True)
    detail = fields.String(required=True)
    type = fields.String(required=True, metadata={"format": "uri"})
    instance = fields.String(required=True, metadata={"format": "uri"})
    errors = fields.List(fields.Nested(ErrorDetailSchema), required=True,
                         metadata={"maxItems": MAX_ENTRIES + 1})  # and one saying how many more


class HealthSchema(BodySchema):
    """The answer of /healthz and /readyz."""

    SCHEMA_NAME = "Health"
    schema_url = schema_url_field(required=True)
    status = fields.String(required=True, metadata={"description": "`ok`.", "examples": ["ok"]})


class ServiceIndexSchema(BodySchema):
    """The answer of `GET /`: where to go from the root."""

    SCHEMA_NAME = "ServiceIndex"
    schema_url = schema_url_field(required=True)
    service = fields.String(required=True, metadata={
        "description": "What this is.", "examples": ["Cluster Inventory Service"]})
    links = fields.Dict(
        keys=fields.String(), values=fields.String(metadata={"format": "uri"}), required=True,
        metadata={
            "description": "Each path below the root that a GET answers without a parameter, "
                           "by its name, as an absolute URL: `docs` (the API's reference), "
                           "`openapi.json` (the OpenAPI document), `schemas` (the JSON "
                           "Schemas), `healthz`, `readyz`, `events` (the change feed) and each "
                           "collection.",
            "examples": [{"docs": "http://localhost:8000/docs",
                          "openapi.json": "http://localhost:8000/openapi.json",
                          "kubeclusters": "http://localhost:8000/kubeclusters"}]})


class EnvelopeSchema(Schema):
    """The embedded store's size against the envelope it is measured for."""

    clusters = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SAFE_INTEGER})
    scans = WholeNumber(required=True, metadata={"minimum": 0, "maximum": MAX_SAFE_INTEGER})
    within = fields.Boolean(required=True, metadata={
        "description": "Whether it holds at most 100,000 clusters and 1,000,000 scans; past "
                       "them it keeps its promises as far as it can (use MongoDB)."})


class ReadinessSchema(BodySchema):
    """The answer of /readyz."""

    SCHEMA_NAME = "Readiness"
    schema_url = schema_url_field(required=True)
    status = fields.String(required=True, metadata={"description": "`ok`.", "examples": ["ok"]})
    envelope = fields.Nested(EnvelopeSchema, metadata={
        "description": "On the embedded store only: its size against its envelope."})
