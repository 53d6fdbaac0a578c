"""Webhooks: the feed's events POSTed to a receiver, by `whk_` id."""
from inventory.core.ordering import Orderings
from inventory.core.spec import IdForm, PathKey, ResourceSpec

ID = IdForm("whk")
SECRET_PREFIX = "whsec_"  # the Standard Webhooks secret format: whsec_ + base64

SPEC = ResourceSpec(
    name="webhooks", kind="webhook", path="webhooks",
    parent="organizations", parent_field="organization",
    id_form=ID,
    path_key=PathKey("webhook", "The webhook's id (`whk_` + UUID).",
                     f"a webhook id ({ID.described})", (ID.pattern,), ID.max_length, ID.example),
    # no events of its own: a webhook's changes would carry its secret's owner's
    # receiver URL to every reader of the feed, and its secret must never be in one
    event_kind=None, quota_kind="webhooks", refuses_parent_delete=False,
    filter_fields={"id": "string", "url": "string", "organization": "string",
                   "description": "string", "created_on": "timestamp"},
    read_defaults={"inactive_reason": None, "last_delivered_event": None},
    orderings=Orderings.of("created_on"),
    indexes=(((("organization", 1), ("_id", 1)), {}),
             # the deliverers' look-up of the webhooks that may see an event
             ((("_scope", 1), ("_id", 1)), {}),
             # an unscoped admin's webhook holds one of the service's seats
             ((("_seat", 1),), {"unique": True, "sparse": True})),
)
