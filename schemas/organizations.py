from marshmallow import fields

from schemas.common import BodySchema, audit_fields, envelope
from schemas.fields import Text


class OrganizationSchema(BodySchema):
    """One customer."""

    SCHEMA_NAME = "Organization"
    id = fields.String(dump_only=True, metadata={"description": "`org_` + a UUID, made by the server."})
    title = Text(200, min_length=1, required=True, metadata={"description": "Display name of the customer."})
    description = Text(2000, multiline=True, load_default="")
    created_by, created_on, last_modified_by, last_modified_on = audit_fields()


class OrganizationPatchSchema(OrganizationSchema):
    """Fields to change; absent fields stay as they are."""

    def __init__(self, **kwargs):
        super().__init__(partial=True, **kwargs)


OrganizationListSchema = envelope("OrganizationList", OrganizationSchema)
