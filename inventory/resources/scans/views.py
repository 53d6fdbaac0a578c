"""/kubeclusters/{cluster}/scans: the scans of a cluster."""
from functools import partial

from flask import url_for
from flask.views import MethodView

from inventory.core.caps import MAX_SCAN_BODY_BYTES
from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.conditional import read, with_etag
from inventory.http.generic import RecordList, under
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.clusters.spec import SPEC as CLUSTER
from inventory.resources.scans.spec import SPEC
from inventory.store import get_store
from schemas.scans import (
    FILTER_EXAMPLES,
    KubeClusterScanCreateSchema,
    KubeClusterScanListSchema,
    KubeClusterScanSchema,
)

blp = Blueprint("kubeclusterscans", __name__, path_keys=(CLUSTER.path_key, SPEC.path_key),
                url_prefix="/kubeclusters",
                description="Scans of a cluster, listed in `scanned_on` order.")
listing = RecordList.of("KubeClusterScanList", KubeClusterScanListSchema, FILTER_EXAMPLES,
                        SPEC.orderings)


@blp.route("/<cluster>/scans")
class KubeClusterScans(MethodView):
    @blp.arguments(listing.list_args, location="query")
    @blp.response(200, KubeClusterScanListSchema)
    @operation("listKubeClusterScans", role="reader", errors=(404, 422), csv=True)
    def get(self, args, cluster):
        """List the scans of a cluster, oldest first"""
        store = get_store()
        cluster_id = under(store.clusters, store.scans, cluster)  # 404 unless the caller sees it
        return list_page(f"kubeclusters/{cluster_id}/scans", args,
                         partial(store.scans.list_under, cluster_id), SPEC.orderings,
                         listing.columns, f"kubeclusters-{cluster}-scans.csv")

    @blp.arguments(KubeClusterScanCreateSchema, required=False)  # empty: scanned now
    @blp.response(201, KubeClusterScanSchema)
    @operation("recordKubeClusterScan", role="writer", etag=True, idempotency_key=True,
               errors=(404, 422), max_body=MAX_SCAN_BODY_BYTES,
               links={"get": ("getKubeClusterScan", {"cluster": "$response.body#/cluster",
                                                     "scan": "$response.body#/id"})})
    def post(self, body, cluster):
        """Record a scan of a cluster

        The body may be empty: `scanned_on` defaults to now. The cluster's
        `last_scanned_on` rises to the newest of its scans. What the scan
        observed (`server`, `nodes`, `deprecated_api_requests`, `findings`),
        when it is the newest to observe it, becomes the cluster's
        `observed` and `readiness`."""
        record = get_store().scans.create_under(cluster, body, current_principal().name,
                                                current_scope())
        location = url_for(".KubeClusterScan", cluster=cluster, scan=record["id"], _external=True)
        return with_etag(record, 201, {"Location": location})


@blp.route("/<cluster>/scans/<scan>")
class KubeClusterScan(MethodView):
    @blp.response(200, KubeClusterScanSchema)
    @operation("getKubeClusterScan", role="reader", if_none_match=True, etag=True,
               errors=(404, 422))
    def get(self, cluster, scan):
        """Read one scan of a cluster"""
        store = get_store()
        return read(store.scans.get_under(under(store.clusters, store.scans, cluster), scan))
