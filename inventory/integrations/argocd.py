"""Argo CD's ApplicationSet plugin generator: `baseUrl: <service>/integrations/argocd`."""
from flask.views import MethodView

from inventory.core.lifecycle import minor_of
from inventory.http.blueprint import Blueprint
from inventory.http.operations import operation
from inventory.integrations.clusters import every_matching_cluster
from schemas.integrations import ArgoCDGetParamsRequestSchema, ArgoCDResponseSchema

blp = Blueprint("argocd", __name__, url_prefix="/integrations/argocd",
                description="Argo CD's ApplicationSet plugin generator.")


def parameters(cluster):
    """One cluster as one parameter set of the generator."""
    return {"name": cluster["name"], "id": cluster["id"],
            "organization": cluster["organization"], "platform": cluster["platform"],
            "environment": cluster["environment"], "version": cluster["version"],
            "minor": minor_of(cluster["version"]), "support_status": cluster["support"]["status"],
            "labels": cluster["labels"], "server": cluster["endpoint"]}


@blp.route("/api/v1/getparams.execute")
class GetParams(MethodView):
    @blp.arguments(ArgoCDGetParamsRequestSchema)
    @blp.response(200, ArgoCDResponseSchema)
    @operation("argocdGetParams", role="reader", errors=(422,))
    def post(self, body):
        """Argo CD plugin generator: one parameter set per cluster

        Argo CD's own request and answer. `input.parameters.filter` (optional)
        is the clusters' filter; other parameters are ignored. One set per
        cluster the caller may see, in name order, not paged. An empty list
        means that no cluster matches: every failure (a bad token or filter,
        more clusters than the documented maximum, the database away) is an
        error answer, never an empty or truncated list, since Argo CD deletes
        the applications of clusters that leave the list."""
        filter_text = (body["input"].get("parameters") or {}).get("filter")
        clusters = every_matching_cluster(filter_text, "body.input.parameters.filter")
        return {"output": {"parameters": [parameters(cluster) for cluster in clusters]}}
