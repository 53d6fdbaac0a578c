"""/kubeclusters/{cluster}/scans: the scans of a cluster."""
from flask.views import MethodView

import schemas.scans
from inventory.core.caps import MAX_SCAN_BODY_BYTES
from inventory.http.blueprint import Blueprint
from inventory.http.generic import ResourceViews
from inventory.resources.clusters.spec import SPEC as CLUSTER
from inventory.resources.scans.spec import SPEC

blp = Blueprint("kubeclusterscans", __name__, path_keys=(CLUSTER.path_key, SPEC.path_key),
                url_prefix="/kubeclusters",
                description="Scans of a cluster, listed in `scanned_on` order.")
views = ResourceViews(blp, SPEC, schemas.scans, "KubeClusterScan", parent=CLUSTER)


@blp.route("/<cluster>/scans")
class KubeClusterScans(MethodView):
    @views.listing()
    def get(self):
        """List the scans of a cluster, oldest first"""

    @views.creating(operation_id="recordKubeClusterScan", body_required=False,  # scanned now
                    max_body=MAX_SCAN_BODY_BYTES,
                    links={"get": ("getKubeClusterScan", {"cluster": "$response.body#/cluster",
                                                          "scan": "$response.body#/id"})})
    def post(self):
        """Record a scan of a cluster

        The body may be empty: `scanned_on` defaults to now. The cluster's
        `last_scanned_on` rises to the newest of its scans. What the scan
        observed (`server`, `nodes`, `deprecated_api_requests`, `findings`),
        when it is the newest to observe it, becomes the cluster's
        `observed` and `readiness`."""


@blp.route("/<cluster>/scans/<scan>")
class KubeClusterScan(MethodView):
    @views.reading()
    def get(self):
        """Read one scan of a cluster"""
