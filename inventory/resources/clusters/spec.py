"""KubeClusters: what platforms provision, by name or `k8scl_` id."""
from inventory.core.caps import ENVELOPE_CLUSTERS
from inventory.core.ids import SLUG_LENGTH, SLUG_RE
from inventory.core.lifecycle import DISTRIBUTION_FIELD, PROVIDER_FIELD, VERSION_KEY_FIELD
from inventory.core.ordering import Orderings
from inventory.core.spec import AUDIT_FIELDS, IdForm, PathKey, ResourceSpec

ID = IdForm("k8scl")
# Kept beside `observed.version`, as VERSION_KEY_FIELD beside `version`: it
# compares as a version.
OBSERVED_VERSION_KEY_FIELD = "_observed_version_key"
# Kept beside `observed` and `readiness`: the minor a rollout reads (the
# observed one, else the recorded one) and the readiness' status as one
# string (inventory/core/rollouts.py `standing`), written with them
ROLLOUT_STANDING_FIELD = "_rollout_standing"

SPEC = ResourceSpec(
    name="clusters", kind="cluster", path="kubeclusters",
    parent="platforms", parent_field="platform",
    id_form=ID,
    path_key=PathKey("cluster", "The cluster's name (slug) or id (`k8scl_` + UUID).",
                     f"a cluster name (an RFC 1123 DNS label) or id ({ID.described})",
                     (SLUG_RE, ID.pattern), max(SLUG_LENGTH, ID.max_length), "c"),
    event_kind="kubecluster", quota_kind="clusters", envelope=ENVELOPE_CLUSTERS,
    filter_fields={"name": "string", "id": "string", "platform": "string",
                   "organization": "string", "environment": "string",
                   "version": "version", "title": "string", "description": "string",
                   "labels": "labels", "last_scanned_on": "integer", "endpoint": "string",
                   "support.status": "support_status", "support.ends_on": "support_date",
                   "support.all_ends_on": "support_date",
                   "observed.version": "version", "observed.minor": "string",
                   "readiness.status": "string", "readiness.target": "string",
                   **AUDIT_FIELDS},
    # (a cluster stored before readiness reads one of unknown checks: the
    # store works it out from its version, and `create-indexes` stores it)
    read_defaults={"last_scanned_on": None, "endpoint": None, "observed": None},
    orderings=Orderings.of("name", "environment", "version", "created_on", "last_modified_on",
                           "last_scanned_on", "environment, version",
                           "environment, version desc",
                           # kept with the dates of today (ClusterStore.order_fields)
                           "support.ends_on", "support.all_ends_on"),
    # group_by field -> the stored fields its value is made of (and `labels.<key>`)
    group_fields={"organization": ("organization",), "platform": ("platform",),
                  "environment": ("environment",), "version": (VERSION_KEY_FIELD,),
                  "support.status": (DISTRIBUTION_FIELD, VERSION_KEY_FIELD),
                  "control_plane.provider": (PROVIDER_FIELD,),
                  "readiness.status": ("readiness.status",),
                  "observed.minor": ("observed.minor",)},
    indexes=(
        ((("id", 1),), {"unique": True}),
        ((("platform", 1), ("_id", 1)), {}),
        ((("organization", 1), ("_id", 1)), {}),
        # support.status compiles into version ranges per distribution:
        # a summary under it reads only those ranges
        (((DISTRIBUTION_FIELD, 1), (VERSION_KEY_FIELD, 1)), {}),
        ((("organization", 1), (DISTRIBUTION_FIELD, 1), (VERSION_KEY_FIELD, 1)), {}),
        # readiness is stored when a scan or the version changes, so that a
        # filter (and a summary, and :blockers) by its status reads its range
        ((("readiness.status", 1), ("_id", 1)), {}),
        ((("organization", 1), ("readiness.status", 1), ("_id", 1)), {}),
        (((OBSERVED_VERSION_KEY_FIELD, 1),), {}),
    ),
)
