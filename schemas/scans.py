"""A scan of a cluster."""
from marshmallow import fields, validate

from schemas.common import BodySchema, envelope, request_schema
from schemas.fields import WholeNumber

MAX_SCANNED_ON = 253402300799  # 9999-12-31T23:59:59Z


class KubeClusterScanSchema(BodySchema):
    """One scan of a cluster."""

    SCHEMA_NAME = "KubeClusterScan"
    id = fields.String(dump_only=True, required=True,
                       metadata={"description": "`k8scs_` + a UUID."})
    cluster = fields.String(dump_only=True, required=True,
                            metadata={"description": "The scanned cluster's `k8scl_` id."})
    scanned_on = WholeNumber(
        required=True, validate=validate.Range(min=0, max=MAX_SCANNED_ON),
        metadata={"description": "Time of the scan in seconds since the Unix epoch (UTC); "
                  "when recording a scan, now if omitted."})


KubeClusterScanCreateSchema = request_schema(KubeClusterScanSchema, "KubeClusterScanCreate",
                                             example={"scanned_on": 1763800000})
KubeClusterScanListSchema = envelope("KubeClusterScanList", KubeClusterScanSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = [
    "scanned_on>=1763800000", "scanned_on>=1763800000 AND scanned_on<1764400000"]
