"""API tokens: records, and the secret shown once."""
from marshmallow import fields, validate

from inventory.core.ids import ORGANIZATION_ID as ORG_ID
from inventory.core.roles import ROLES
from schemas.common import (
    BodySchema,
    envelope,
    request_schema,
    schema_url_field,
)
from schemas.fields import Text


class TokenSchema(BodySchema):
    """An API token's record; its secret is shown once, when it is made."""

    SCHEMA_NAME = "Token"
    id = fields.String(dump_only=True, required=True, metadata={"description": "`tok_` + a UUID."})
    name = Text(100, min_length=1, required=True,
                metadata={"description": "Who uses the token; recorded in audit fields."})
    role = fields.String(required=True, validate=validate.OneOf(ROLES), metadata={
        "description": "reader: GET; writer: also changes platforms, clusters and scans; "
                       "admin: also organizations and tokens."})
    organization = fields.String(
        required=True, allow_none=True,
        validate=validate.Regexp(ORG_ID.pattern, error="Must be an organization id."),
        metadata={"description": "The organization the token is confined to; null: all.",
                  "pattern": ORG_ID.pattern.pattern, "maxLength": ORG_ID.max_length})
    created_by = fields.String(dump_only=True, required=True)
    created_on = fields.String(dump_only=True, required=True, metadata={"format": "date-time"})
    last_used_on = fields.String(dump_only=True, required=True, allow_none=True,
                                 metadata={"format": "date-time",
                                           "description": "Within a minute; null if never."})


class NewTokenSchema(TokenSchema):
    """A token just made: its record and, this once, its secret."""

    SCHEMA_NAME = "NewToken"
    schema_url = schema_url_field(required=True)
    token = fields.String(dump_only=True, required=True, metadata={
        "description": "The secret, for `Authorization: Bearer <token>`. Shown only now."})


TokenCreateSchema = request_schema(TokenSchema, "TokenCreate", required=("name", "role"),
                                   defaults={"organization": None},
                                   example={"name": "scanner-eu", "role": "writer"})
TokenListSchema = envelope("TokenList", TokenSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = ['role="admin"', 'organization="org_0192f4a0-0000-7000-8000-000000000000"']
