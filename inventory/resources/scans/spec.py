"""Scans of a cluster, by `k8scs_` id under their cluster."""
from inventory.core.caps import ENVELOPE_SCANS
from inventory.core.ordering import Orderings
from inventory.core.spec import IdForm, PathKey, ResourceSpec

ID = IdForm("k8scs")
# What a scan may observe of its cluster (schemas/scans.py); `agent` stays
# with every scan, the others only with a cluster's newest.
OBSERVATIONS = ("agent", "server", "nodes", "deprecated_api_requests", "findings")
KEPT_OBSERVATIONS = OBSERVATIONS[1:]

SPEC = ResourceSpec(
    name="scans", kind="scan", path="scans", nested=True,
    parent="clusters", parent_field="cluster", parent_holds="id",
    id_form=ID,
    path_key=PathKey("scan", "The scan's id.", f"a scan id ({ID.described})", (ID.pattern,),
                     ID.max_length, ID.example),
    event_kind="kubeclusterscan", event_actions=("created",),
    refuses_parent_delete=False,  # scans always go with their cluster
    envelope=ENVELOPE_SCANS,
    filter_fields={"id": "string", "cluster": "string", "scanned_on": "integer"},
    orderings=Orderings.of("scanned_on"),
    # scans recorded before observations, and those past the newest that
    # keep them (inventory.core.caps.OBSERVED_SCANS_KEPT), read as null
    read_defaults=dict.fromkeys(OBSERVATIONS),
    # Scan ids are UUIDv7s the server makes; the index serves lookups. (A
    # unique one would guard nothing, and costs the embedded store a pass
    # over every scan on each insert.)
    indexes=(((("id", 1),), {}),),
)
