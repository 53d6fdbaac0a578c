"""The change feed's events, and how to ask for them."""
from marshmallow import Schema, fields, validate

from inventory.core.ids import EVENT_ID_LENGTH, EVENT_ID_RE
from schemas.common import (
    FILTER_DESCRIPTION,
    BodySchema,
    continue_field,
    envelope,
    filter_field,
    format_field,
    limit_field,
    order_by_field,
)
from schemas.fields import WholeNumber

MAX_WAIT = 60
# The feed's event types (the document's enum of `type`), handed by the
# events' views from the resources' specs: no schema imports a resource.
EVENT_TYPES = []


class ChangeSchema(Schema):
    """One field's value before and after an update."""

    from_ = fields.Raw(data_key="from", attribute="from", required=True, allow_none=True)
    to = fields.Raw(required=True, allow_none=True)


class EventSchema(BodySchema):
    """A change the service accepted: what, to which record, by whom, when."""

    SCHEMA_NAME = "Event"
    id = fields.String(required=True, metadata={
        "description": "`evt_` + 16 hex digits; ids compare in feed order as plain strings.",
        "pattern": EVENT_ID_RE.pattern})
    type = fields.String(required=True, metadata={"enum": EVENT_TYPES})
    occurred_on = fields.String(required=True, metadata={
        "format": "date-time", "description": "When the change took its place in the feed, "
        "right after it was made (RFC 3339, UTC): one process's times never go back along "
        "the feed's order; between processes, by at most their clocks' difference and about "
        "a millisecond."})
    actor = fields.String(required=True, metadata={
        "description": "The name of the caller who made the change, as in `last_modified_by`."})
    organization = fields.String(metadata={
        "description": "The organization the record belongs to; absent for an unscoped "
                       "token."})
    subject = fields.String(required=True, metadata={
        "description": "The record's path, e.g. `/kubeclusters/payments`.",
        "examples": ["/kubeclusters/payments"]})
    object = fields.Dict(required=True, metadata={
        "description": "The record as a GET showed it right after the change (for a delete: "
                       "as it was); a token's never holds its secret."})
    changes = fields.Dict(keys=fields.String(), values=fields.Nested(ChangeSchema), metadata={
        "description": "For an update: each changed field's value before and after, by "
                       "dotted path (`labels.team`)."})


EventListSchema = envelope("EventList", EventSchema)


def event_list_args(orderings):
    """The query arguments of the feed, ordered by `orderings` (the events' spec's)."""

    class EventListArgsSchema(Schema):
        limit = limit_field()
        continue_ = continue_field()
        format_ = format_field()
        filter = filter_field(
            ['type="kubecluster.*"', 'subject="/kubeclusters/payments"',
             'actor="scanner-eu" AND occurred_on>="2026-11-01T00:00:00Z"',
             'type="kubecluster.updated" AND changed="readiness.status"'],
            FILTER_DESCRIPTION.replace("Fields are the listed resource's fields",
                                       "Fields are `type`, `occurred_on`, `actor`, "
                                       "`organization`, `subject` and `changed` (an update "
                                       "that changed that field, by its dotted path: "
                                       "`changes` has it)"))
        after = fields.String(
            validate=validate.Regexp(EVENT_ID_RE, error="Must be an event id (evt_ followed by "
                                                        "16 hex digits)."),
            metadata={"description": "Only the events after this one: the last id a reader "
                                     "saw. 410 if the feed no longer keeps it.",
                      "pattern": EVENT_ID_RE.pattern, "maxLength": EVENT_ID_LENGTH})
        order_by = order_by_field(orderings)
        wait = WholeNumber(
            text=True, validate=validate.Range(min=1, max=MAX_WAIT),
            metadata={"description": f"Seconds (1 to {MAX_WAIT}) to wait for a newer event "
                                     "when there is none yet; the answer comes as soon as one "
                                     "is committed, or empty at the end of the wait."})
    return EventListArgsSchema
