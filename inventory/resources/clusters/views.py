"""/kubeclusters: the clusters platforms provision, by name or `k8scl_` id."""
from flask import url_for
from flask.views import MethodView

from inventory.core import filtering, grouping
from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.conditional import if_match, read, with_etag
from inventory.http.generic import RecordList
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.clusters.spec import SPEC
from inventory.store import get_store
from schemas.clusters import (
    FILTER_EXAMPLES,
    KubeClusterBlockersArgsSchema,
    KubeClusterBlockersSchema,
    KubeClusterCreateSchema,
    KubeClusterListSchema,
    KubeClusterPatchSchema,
    KubeClusterSchema,
    summary_schemas,
)

# Full paths, no url_prefix: Flask would join a prefix and `:summary` with a "/".
blp = Blueprint("kubeclusters", __name__, path_keys=(SPEC.path_key,),
                description="KubeClusters, addressed by name or by `k8scl_` id.")
listing = RecordList.of("KubeClusterList", KubeClusterListSchema, FILTER_EXAMPLES, SPEC.orderings)

_BY_NAME = {"cluster": "$response.body#/name"}

# handed the spec's group fields: schemas import no resource
KubeClusterSummaryArgsSchema, KubeClusterSummarySchema = summary_schemas(SPEC.group_fields)


@blp.route("/kubeclusters")
class KubeClusters(MethodView):
    @blp.arguments(listing.list_args, location="query")
    @blp.response(200, KubeClusterListSchema)
    @operation("listKubeClusters", role="reader", errors=(422,), csv=True)
    def get(self, args):
        """List clusters, in name order"""
        return list_page("kubeclusters", args, get_store().clusters.list, SPEC.orderings,
                         listing.columns, "kubeclusters.csv")

    @blp.arguments(KubeClusterCreateSchema)
    @blp.response(201, KubeClusterSchema)
    @operation("createKubeCluster", role="writer", etag=True, idempotency_key=True,
               errors=(409, 422), links={
                   "get": ("getKubeCluster", _BY_NAME), "update": ("updateKubeCluster", _BY_NAME),
                   "delete": ("deleteKubeCluster", _BY_NAME),
                   "scans": ("listKubeClusterScans", _BY_NAME),
                   "recordScan": ("recordKubeClusterScan", _BY_NAME)})
    def post(self, body):
        """Create a cluster on a platform

        Its `platform` must exist (and be the caller's organization's, for a
        scoped token); its `organization` is the platform's."""
        record = get_store().clusters.create(body, current_principal().name, current_scope())
        location = url_for(".KubeCluster", cluster=record["name"], _external=True)
        return with_etag(record, 201, {"Location": location})


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


@blp.route("/kubeclusters:blockers")
class KubeClusterBlockers(MethodView):
    @blp.arguments(KubeClusterBlockersArgsSchema, location="query")
    @blp.response(200, KubeClusterBlockersSchema)
    @operation("listKubeClusterBlockers", role="reader", errors=(422,))
    def get(self, args):
        """What stands between the fleet and its next minor versions

        The clusters the caller may see that match `filter`, counted by what
        fails their `readiness` (each failing check and key: a deprecated
        API, a kubelet minor outside the skew policy, a recorded version the
        API server contradicts): `{"blockers": [{"check", "status", "key",
        "clusters"}], "total": n}`, most clusters first. Every matching
        cluster is counted (no paging), as in the summary."""
        tree = filtering.parse(args["filter"]) if args.get("filter") else None
        blockers, total = get_store().clusters.blockers(tree, current_scope())
        return {"blockers": [{"check": check, "status": status, "key": key, "clusters": count}
                             for (check, status, key), count in blockers],
                "total": total}


@blp.route("/kubeclusters/<cluster>")
class KubeCluster(MethodView):
    @blp.response(200, KubeClusterSchema)
    @operation("getKubeCluster", role="reader", if_none_match=True, etag=True, errors=(404, 422))
    def get(self, cluster):
        """Read a cluster

        Answers 304 with no body when `If-None-Match` names its ETag."""
        return read(get_store().clusters.get(cluster, current_scope()))

    @blp.arguments(KubeClusterPatchSchema, required=False)
    @blp.response(200, KubeClusterSchema)
    @operation("updateKubeCluster", role="writer", if_match=True, etag=True,
               errors=(404, 409, 412, 422))
    def patch(self, changes, cluster):
        """Change some fields of a cluster

        A JSON merge patch: `labels` merge key by key and a null value removes
        a label (at most 64 remain); `name` and `platform` cannot change (422).
        With `If-Match`, only if the record is still at that ETag (else 412)."""
        return with_etag(get_store().clusters.update(
            cluster, changes, current_principal().name, current_scope(), revisions=if_match()))

    # no `force`: its scans go with it (their spec's refuses_parent_delete=False)
    @blp.response(204)
    @operation("deleteKubeCluster", role="writer", if_match=True, errors=(404, 412, 422))
    def delete(self, cluster):
        """Delete a cluster and its scans

        Repeating a delete that was interrupted finishes it."""
        get_store().clusters.delete(cluster, scope=current_scope(), revisions=if_match())
