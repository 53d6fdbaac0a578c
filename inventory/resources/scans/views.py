"""/kubeclusters/{cluster}/scans: the scans of a cluster."""
from functools import partial

from flask import url_for
from flask.views import MethodView

from inventory.http.auth import current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.conditional import read, with_etag
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.clusters.spec import SPEC as CLUSTER
from inventory.resources.scans.spec import SPEC
from inventory.store import get_store
from schemas.scans import (
    KubeClusterScanCreateSchema,
    KubeClusterScanListArgsSchema,
    KubeClusterScanListSchema,
    KubeClusterScanSchema,
)

blp = Blueprint("kubeclusterscans", __name__, path_keys=(CLUSTER.path_key, SPEC.path_key),
                url_prefix="/kubeclusters",
                description="Scans of a cluster, listed in `scanned_on` order.")


@blp.route("/<cluster>/scans")
class KubeClusterScans(MethodView):
    @blp.arguments(KubeClusterScanListArgsSchema, location="query")
    @blp.response(200, KubeClusterScanListSchema)
    @operation("listKubeClusterScans", role="reader", errors=(404, 422))
    def get(self, args, cluster):
        """List the scans of a cluster, oldest first"""
        store = get_store()
        cluster_id = store.clusters.get(cluster, current_scope())["id"]
        return list_page(f"kubeclusters/{cluster_id}/scans", args,
                         partial(store.scans.list_of_cluster, cluster_id), SPEC.orderings)

    @blp.arguments(KubeClusterScanCreateSchema, required=False)  # no body: scanned now
    @blp.response(201, KubeClusterScanSchema)
    @operation("recordKubeClusterScan", role="writer", idempotency_key=True, etag=True,
               errors=(404, 422), links={
                   "get": ("getKubeClusterScan", {"cluster": "$response.body#/cluster",
                                                  "scan": "$response.body#/id"})})
    def post(self, body, cluster):
        """Record a scan of a cluster

        The body may be empty: `scanned_on` defaults to now. The cluster's
        `last_scanned_on` rises to the newest of its scans."""
        scan = get_store().scans.create(cluster, body.get("scanned_on"),
                                        current_scope())
        location = url_for(".KubeClusterScan", cluster=cluster, scan=scan["id"], _external=True)
        return with_etag(scan, 201, {"Location": location})


@blp.route("/<cluster>/scans/<scan>")
class KubeClusterScan(MethodView):
    @blp.response(200, KubeClusterScanSchema)
    @operation("getKubeClusterScan", role="reader", if_none_match=True, etag=True,
               errors=(404, 422))
    def get(self, cluster, scan):
        """Read one scan of a cluster"""
        store = get_store()
        found = store.clusters.get(cluster, current_scope())
        return read(store.scans.get_of_cluster(found["id"], scan))
