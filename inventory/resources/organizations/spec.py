"""Organizations: one customer each, by `org_` id."""
from inventory.core.ids import ORGANIZATION_ID
from inventory.core.ordering import Orderings
from inventory.core.spec import AUDIT_FIELDS, PathKey, ResourceSpec

ID = ORGANIZATION_ID

SPEC = ResourceSpec(
    name="organizations", kind="organization", path="organizations", id_form=ID,
    path_key=PathKey("org", "The organization's id.", f"an organization id ({ID.described})",
                     (ID.pattern,), ID.max_length, ID.example),
    event_kind="organization",
    filter_fields={"id": "string", "title": "string", "description": "string", **AUDIT_FIELDS},
    orderings=Orderings.of("title", "created_on", "last_modified_on"),
)
