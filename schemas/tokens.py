from marshmallow import fields, validate

from inventory.ids import ORG_ID_RE
from inventory.roles import ROLES
from schemas.common import BodySchema, envelope
from schemas.fields import Text


class TokenSchema(BodySchema):
    """An API token's record; its secret is shown once, when it is made."""

    SCHEMA_NAME = "Token"
    id = fields.String(dump_only=True, metadata={"description": "`tok_` + a UUID."})
    name = Text(100, min_length=1, required=True,
                metadata={"description": "Who uses the token; recorded in audit fields."})
    role = fields.String(required=True, validate=validate.OneOf(ROLES), metadata={
        "description": "reader: GET; writer: also changes platforms, clusters and scans; "
                       "admin: also organizations and tokens."})
    organization = fields.String(
        load_default=None, allow_none=True,
        validate=validate.Regexp(ORG_ID_RE, error="Must be an organization id."),
        metadata={"description": "Confine the token to this organization (null: all)."})
    created_by = fields.String(dump_only=True)
    created_on = fields.String(dump_only=True, metadata={"format": "date-time"})
    last_used_on = fields.String(dump_only=True, allow_none=True,
                                 metadata={"format": "date-time",
                                           "description": "Within a minute."})


class NewTokenSchema(TokenSchema):
    SCHEMA_NAME = "NewToken"
    token = fields.String(dump_only=True, metadata={
        "description": "The secret, for `Authorization: Bearer <token>`. Shown only now."})


TokenListSchema = envelope("TokenList", TokenSchema)
