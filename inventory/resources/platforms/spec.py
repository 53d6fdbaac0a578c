"""KubePlatforms: an organization's cloud and control-plane provider, by name."""
from inventory.core.ids import SLUG_LENGTH, SLUG_RE
from inventory.core.ordering import Orderings
from inventory.core.spec import AUDIT_FIELDS, PathKey, ResourceSpec

SPEC = ResourceSpec(
    name="platforms", kind="platform", path="kubeplatforms",
    parent="organizations", parent_field="organization",
    path_key=PathKey("platform", "The platform's name (slug).",
                     "a platform name (an RFC 1123 DNS label)", (SLUG_RE,), SLUG_LENGTH, "p"),
    event_kind="kubeplatform", quota_kind="platforms",
    filter_fields={"name": "string", "organization": "string", "title": "string",
                   "description": "string", "control_plane.provider": "string",
                   "infrastructure.cloud.provider": "string", **AUDIT_FIELDS},
    orderings=Orderings.of("name", "title", "created_on", "last_modified_on",
                           "control_plane.provider", "infrastructure.cloud.provider"),
    indexes=(((("organization", 1), ("_id", 1)), {}),),
)
