"""An organization: one customer."""
from marshmallow import Schema, fields, validate

from schemas.common import BodySchema, audit_fields, envelope, request_schema
from schemas.fields import Text, WholeNumber

MAX_QUOTA = 1_000_000


def _quota(what, required):
    return WholeNumber(required=required, validate=validate.Range(0, MAX_QUOTA),
                          metadata={"description": f"How many {what} the organization may hold."})


class QuotasSchema(Schema):
    """What an organization may hold; the deployment's defaults where its
    admins set none (QUOTA_PLATFORMS, QUOTA_CLUSTERS, QUOTA_TOKENS, QUOTA_WEBHOOKS)."""

    platforms = _quota("platforms", True)
    clusters = _quota("clusters", True)
    tokens = _quota("tokens scoped to it", True)
    webhooks = _quota("webhooks", True)


class QuotasChangeSchema(Schema):
    """Quotas to set; absent ones stay as they are."""

    platforms = _quota("platforms", False)
    clusters = _quota("clusters", False)
    tokens = _quota("tokens scoped to it", False)
    webhooks = _quota("webhooks", False)


class OrganizationSchema(BodySchema):
    """One customer."""

    SCHEMA_NAME = "Organization"
    id = fields.String(dump_only=True, required=True,
                       metadata={"description": "`org_` + a UUID, made by the server."})
    title = Text(200, min_length=1, required=True,
                 metadata={"description": "Display name of the customer."})
    description = Text(2000, multiline=True, required=True,
                       metadata={"description": "Free text; empty when not given."})
    quotas = fields.Nested(QuotasSchema, required=True, metadata={
        "description": "What the organization may hold: a create past a quota is a 403 "
                       "naming it. Read by its members; set only by admins not scoped to an "
                       "organization."})
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


_QUOTAS_CHANGE = fields.Nested(QuotasChangeSchema, metadata={
    "description": "Quotas to set (admins not scoped to an organization only); absent ones "
                   "keep their value, the deployment's default unless set."})
OrganizationCreateSchema = request_schema(OrganizationSchema, "OrganizationCreate",
                                          required=("title",), defaults={"description": ""},
                                          overrides={"quotas": _QUOTAS_CHANGE},
                                          example={"title": "Acme Corp",
                                                   "description": "Payments and ledgers."})
OrganizationPatchSchema = request_schema(OrganizationSchema, "OrganizationPatch", change=True,
                                         overrides={"quotas": _QUOTAS_CHANGE},
                                         example={"description": "Payments, ledgers and cards."})
OrganizationListSchema = envelope("OrganizationList", OrganizationSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = [
    'title="Acme*"', 'created_on>="2026-11-01T00:00:00Z"', 'NOT description=""']
