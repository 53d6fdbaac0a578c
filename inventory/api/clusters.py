from flask import url_for
from flask.views import MethodView

from inventory.api.common import cluster_key, list_page
from inventory.api.conditional import if_match, read, with_etag
from inventory.auth import current_principal, current_scope
from inventory.api.parser import Blueprint
from inventory.store import get_store
from schemas.clusters import KubeClusterListSchema, KubeClusterPatchSchema, KubeClusterSchema
from schemas.common import ListArgsSchema

blp = Blueprint("kubeclusters", __name__, url_prefix="/kubeclusters",
                description="KubeClusters, addressed by name or by `k8scl_` id.")

IMMUTABLE = ("name", "platform")


@blp.route("")
class KubeClusters(MethodView):
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, KubeClusterListSchema)
    def get(self, args):
        """List clusters, in name order"""
        return list_page("kubeclusters", args, get_store().clusters.list)

    @blp.arguments(KubeClusterSchema)
    @blp.response(201, KubeClusterSchema)
    def post(self, body):
        """Create a cluster on a platform"""
        cluster = get_store().clusters.create(body, current_principal().name, current_scope())
        location = url_for(".KubeCluster", cluster=cluster["name"], _external=True)
        return with_etag(cluster, 201, {"Location": location})


@blp.route("/<cluster>")
class KubeCluster(MethodView):
    @blp.response(200, KubeClusterSchema)
    def get(self, cluster):
        """Read a cluster"""
        return read(get_store().clusters.get(cluster_key(cluster), current_scope()))

    @blp.arguments(KubeClusterPatchSchema)
    @blp.response(200, KubeClusterSchema)
    def patch(self, changes, cluster):
        """Change some fields of a cluster (not its name or platform); labels merge"""
        immutable = {field: changes.pop(field) for field in IMMUTABLE if field in changes}
        return with_etag(get_store().clusters.update(
            cluster_key(cluster), changes, current_principal().name, immutable,
            current_scope(), if_match()))

    @blp.response(204)
    def delete(self, cluster):
        """Delete a cluster and its scans"""
        get_store().clusters.delete(cluster_key(cluster), scope=current_scope(),
                                    revisions=if_match())
