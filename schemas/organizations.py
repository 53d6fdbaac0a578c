"""An organization: one customer."""
from marshmallow import fields

from inventory.ordering import ORGANIZATIONS
from schemas.common import BodySchema, audit_fields, envelope, list_args, request_schema
from schemas.fields import Text


class OrganizationSchema(BodySchema):
    """One customer."""

    SCHEMA_NAME = "Organization"
    id = fields.String(dump_only=True, required=True,
                       metadata={"description": "`org_` + a UUID, made by the server."})
    title = Text(200, min_length=1, required=True,
                 metadata={"description": "Display name of the customer."})
    description = Text(2000, multiline=True, required=True,
                       metadata={"description": "Free text; empty when not given."})
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


OrganizationCreateSchema = request_schema(OrganizationSchema, "OrganizationCreate",
                                          required=("title",), defaults={"description": ""})
OrganizationPatchSchema = request_schema(OrganizationSchema, "OrganizationPatch", change=True)
OrganizationListSchema = envelope("OrganizationList", OrganizationSchema)
OrganizationListArgsSchema = list_args("OrganizationList", [
    'title="Acme*"', 'created_on>="2026-11-01T00:00:00Z"', 'NOT description=""'], ORGANIZATIONS)
