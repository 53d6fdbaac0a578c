"""/kubeclusters: the clusters platforms provision, by name or `k8scl_` id."""
from flask.views import MethodView

import schemas.clusters
from inventory.core import filtering, grouping
from inventory.http.auth import current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.generic import ResourceViews
from inventory.http.operations import operation
from inventory.resources.clusters.spec import SPEC
from inventory.store import get_store
from schemas.clusters import summary_schemas

# Full paths, no url_prefix: Flask would join a prefix and `:summary` with a "/".
blp = Blueprint("kubeclusters", __name__, path_keys=(SPEC.path_key,),
                description="KubeClusters, addressed by name or by `k8scl_` id.")
views = ResourceViews(blp, SPEC, schemas.clusters, "KubeCluster")

_BY_NAME = {"cluster": "$response.body#/name"}

# handed the spec's group fields: schemas import no resource
KubeClusterSummaryArgsSchema, KubeClusterSummarySchema = summary_schemas(SPEC.group_fields)


@blp.route("/kubeclusters")
class KubeClusters(MethodView):
    @views.listing()
    def get(self):
        """List clusters, in name order"""

    @views.creating(links={
        "get": ("getKubeCluster", _BY_NAME), "update": ("updateKubeCluster", _BY_NAME),
        "delete": ("deleteKubeCluster", _BY_NAME), "scans": ("listKubeClusterScans", _BY_NAME),
        "recordScan": ("recordKubeClusterScan", _BY_NAME)})
    def post(self):
        """Create a cluster on a platform

        Its `platform` must exist (and be the caller's organization's, for a
        scoped token); its `organization` is the platform's."""


@blp.route("/kubeclusters:summary")
class KubeClusterSummary(MethodView):
    @blp.arguments(KubeClusterSummaryArgsSchema, location="query")
    @blp.response(200, KubeClusterSummarySchema)
    @operation("summarizeKubeClusters", role="reader", errors=(422,))
    def get(self, args):
        """Count clusters by fields

        The clusters the caller may see that match `filter`, counted by one
        to three `group_by` fields: `{"groups": [{"key": {...}, "count": n}],
        "total": n}`, in descending count, then key order. Every matching
        cluster is counted (no paging)."""
        tree = filtering.parse(args["filter"]) if args.get("filter") else None
        groups, total = get_store().clusters.summary(
            tree, grouping.parse(args["group_by"], SPEC.group_fields), current_scope())
        return {"groups": [{"key": key, "count": count} for key, count in groups],
                "total": total}


@blp.route("/kubeclusters/<cluster>")
class KubeCluster(MethodView):
    @views.reading()
    def get(self):
        """Read a cluster

        Answers 304 with no body when `If-None-Match` names its ETag."""

    @views.updating()
    def patch(self):
        """Change some fields of a cluster

        A JSON merge patch: `labels` merge key by key and a null value removes
        a label (at most 64 remain); `name` and `platform` cannot change (422).
        With `If-Match`, only if the record is still at that ETag (else 412)."""

    @views.deleting()
    def delete(self):
        """Delete a cluster and its scans

        Repeating a delete that was interrupted finishes it."""
