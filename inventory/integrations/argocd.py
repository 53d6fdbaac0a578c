"""Argo CD's ApplicationSet plugin generator: `baseUrl: <service>/integrations/argocd`."""
from flask import current_app
from flask.views import MethodView

from inventory.core.lifecycle import minor_of
from inventory.core.turns import Turns
from inventory.http.blueprint import Blueprint
from inventory.http.operations import operation
from inventory.integrations.clusters import dumped, dumper, every_matching_cluster
from schemas.integrations import (
    ArgoCDClusterParametersSchema,
    ArgoCDGetParamsRequestSchema,
    ArgoCDResponseSchema,
)

blp = Blueprint("argocd", __name__, url_prefix="/integrations/argocd",
                description="Argo CD's ApplicationSet plugin generator.")
_DUMP = dumper(ArgoCDClusterParametersSchema())


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
        turns = Turns()
        clusters = every_matching_cluster(filter_text, "body.input.parameters.filter", turns)
        # dumped here in slices, as ArgoCDResponseSchema describes it: one
        # dump of the whole answer would hold the loop
        return current_app.json.response(
            {"output": {"parameters": dumped(clusters, parameters, _DUMP, turns)}})
