"""Webhooks: subscriptions of a receiver to the feed, the secret shown once,
and their delivery log."""
from marshmallow import Schema, fields, validate

from inventory.core.caps import MAX_WEBHOOK_URL
from inventory.core.filtering import MAX_LENGTH as MAX_FILTER
from inventory.core.ids import ORGANIZATION_ID as ORG_ID
from schemas.common import (
    BodySchema,
    continue_field,
    envelope,
    format_field,
    limit_field,
    request_schema,
    schema_url_field,
)
from schemas.events import EVENT_ID_LENGTH, EVENT_ID_RE
from schemas.fields import MAX_SAFE_INTEGER, JsonBoolean, Text, WholeNumber

_EVENT_ID = {"pattern": EVENT_ID_RE.pattern, "maxLength": EVENT_ID_LENGTH}


class WebhookSchema(BodySchema):
    """A receiver of the feed's events, POSTed to it signed (Standard Webhooks)."""

    SCHEMA_NAME = "Webhook"
    id = fields.String(dump_only=True, required=True, metadata={
        "description": "`whk_` + a UUID, made by the server."})
    url = fields.String(required=True, validate=validate.Length(min=1, max=MAX_WEBHOOK_URL),
                        metadata={"format": "uri", "maxLength": MAX_WEBHOOK_URL,
                                  "examples": ["https://hooks.example.com/inventory"],
                                  "description": "Where events are POSTed: `https://`, a host "
                                  "that is not (and does not resolve to) a loopback, private, "
                                  "link-local or unspecified address, checked again at each "
                                  "delivery; redirects are not followed."})
    filter = fields.String(required=True, allow_none=True,
                           validate=validate.Length(max=MAX_FILTER), metadata={
                               "description": "The feed's filter (as `GET /events?filter=`): "
                               "only matching events are delivered; null: every event.",
                               "examples": ['type="kubecluster.*"']})
    description = Text(2000, multiline=True, required=True,
                       metadata={"description": "Free text; may be empty."})
    organization = fields.String(
        required=True, allow_none=True,
        validate=validate.Regexp(ORG_ID.pattern, error="Must be an organization id."),
        metadata={"description": "The organization whose events it receives (a scoped "
                  "admin's own); null: every organization's.",
                  "pattern": ORG_ID.pattern.pattern, "maxLength": ORG_ID.max_length})
    active = JsonBoolean(required=True, metadata={
        "description": "Whether events are delivered. Made false after 24 h of failed "
                       "deliveries (with `inactive_reason`); set true again to resume where "
                       "it stopped (410 if the feed no longer keeps that point)."})
    inactive_reason = fields.String(dump_only=True, required=True, allow_none=True)
    last_delivered_event = fields.String(dump_only=True, required=True, allow_none=True,
                                         metadata={**_EVENT_ID, "description": (
                                             "The newest event its receiver acknowledged.")})
    created_by = fields.String(dump_only=True, required=True)
    created_on = fields.String(dump_only=True, required=True, metadata={"format": "date-time"})
    last_modified_by = fields.String(dump_only=True, required=True)
    last_modified_on = fields.String(dump_only=True, required=True,
                                     metadata={"format": "date-time"})


class NewWebhookSchema(WebhookSchema):
    """A webhook just made: its record and, this once, its signing secret."""

    SCHEMA_NAME = "NewWebhook"
    schema_url = schema_url_field(required=True)
    secret = fields.String(dump_only=True, required=True, metadata={
        "description": "The signing secret (`whsec_` + base64, the Standard Webhooks "
                       "format), for verifying `webhook-signature`. Shown only now."})


WebhookCreateSchema = request_schema(
    WebhookSchema, "WebhookCreate", required=("url",),
    defaults={"filter": None, "description": "", "organization": None, "active": True},
    example={"url": "https://hooks.example.com/inventory", "filter": 'type="kubecluster.*"'})
WebhookPatchSchema = request_schema(
    WebhookSchema, "WebhookPatch", change=True, immutable=("organization",),
    example={"active": True})
WebhookListSchema = envelope("WebhookList", WebhookSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = ['url="https://hooks.example.com/inventory"']


class WebhookDeliverySchema(BodySchema):
    """One attempt to deliver an event to a webhook's receiver."""

    SCHEMA_NAME = "WebhookDelivery"
    event = fields.String(required=True, metadata=_EVENT_ID)
    attempt = WholeNumber(required=True, metadata={"minimum": 1, "maximum": MAX_SAFE_INTEGER,
                                                   "description": (
        "1 for the first attempt at this event, counting up while it is retried.")})
    status_code = WholeNumber(required=True, allow_none=True, metadata={
        "minimum": 100, "maximum": 599,
        "description": "The receiver's status code; null when none came (see `error`)."})
    error = fields.String(required=True, allow_none=True, metadata={
        "description": "Why no answer counted: a timeout, a refused address, ..."})
    duration_ms = WholeNumber(required=True, metadata={"minimum": 0, "maximum": 3_600_000})
    at = fields.String(required=True, metadata={"format": "date-time"})


WebhookDeliveryListSchema = envelope("WebhookDeliveryList", WebhookDeliverySchema)


class WebhookDeliveryListArgsSchema(Schema):
    limit = limit_field()
    continue_ = continue_field()
    format_ = format_field()
