"""Rollouts: upgrade waves of the fleet toward a target minor, stage by stage, by name."""
from inventory.core.ids import SLUG_LENGTH, SLUG_RE
from inventory.core.ordering import Orderings
from inventory.core.spec import AUDIT_FIELDS, PathKey, ResourceSpec

SPEC = ResourceSpec(
    name="rollouts", kind="rollout", path="rollouts",
    # an organization's rollouts go with it; a fleet-wide one (no
    # organization: an unscoped admin's) belongs to none
    parent="organizations", parent_field="organization", refuses_parent_delete=False,
    path_key=PathKey("rollout", "The rollout's name (a slug).",
                     "a rollout name (an RFC 1123 DNS label)", (SLUG_RE,), SLUG_LENGTH, "wave"),
    event_kind="rollout", quota_kind="rollouts", reads=("clusters",),
    filter_fields={"name": "string", "title": "string", "description": "string",
                   "organization": "string", "target": "string", **AUDIT_FIELDS},
    orderings=Orderings.of("created_on", "last_modified_on"),
    indexes=(((("organization", 1), ("_id", 1)), {}),
             # the advancer's look-up of the rollouts due for a look
             ((("_due", 1),), {}),
             # the advancer's look: a rollout whose counts the change feed moved past
             ((("_seen", 1),), {})),
)
