"""Argo CD's ApplicationSet plugin generator: `baseUrl: <service>/integrations/argocd`."""
from flask import current_app
from flask.views import MethodView

from inventory.core import filtering
from inventory.core.caps import MAX_INTEGRATION_CLUSTERS
from inventory.core.errors import BadFilter, NotFound
from inventory.core.lifecycle import minor_of
from inventory.core.turns import Turns
from inventory.http.auth import current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.errors import RequestError
from inventory.http.operations import operation
from inventory.integrations.clusters import dumped, dumper, every_matching_cluster
from inventory.store import get_store
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
        is the clusters' filter; with `input.parameters.rollout`, a rollout's
        name, only the clusters it lets upgrade now (its open stages'
        `ready` ones), each with its `stage`; other parameters are ignored. One set per
        cluster the caller may see, in name order, not paged. An empty list
        means that no cluster matches: every failure (a bad token or filter,
        more clusters than the documented maximum, the database away) is an
        error answer, never an empty or truncated list, since Argo CD deletes
        the applications of clusters that leave the list."""
        given = body["input"].get("parameters") or {}
        filter_text, turns = given.get("filter"), Turns()
        if given.get("rollout"):
            staged = _may_upgrade_now(given["rollout"], filter_text, turns)
            clusters = [cluster for _, cluster in staged]
            stages = {cluster["name"]: stage for stage, cluster in staged}

            def shape(cluster):
                return {**parameters(cluster), "stage": stages[cluster["name"]]}
        else:
            clusters = every_matching_cluster(filter_text, "body.input.parameters.filter", turns)
            shape = parameters
        # dumped here in slices, as ArgoCDResponseSchema describes it: one
        # dump of the whole answer would hold the loop
        return current_app.json.response(
            {"output": {"parameters": dumped(clusters, shape, _DUMP, turns)}})


def _may_upgrade_now(name, filter_text, turns):
    """[(stage, cluster)] of the rollout `name`'s open stages' `ready`
    clusters (matching `filter_text` too), as it stands now; a 422 for a
    rollout the caller cannot see, a bad filter or more than the most an
    answer lists."""
    store = get_store().rollouts
    try:
        doc = store.progressed(store.get_doc(name, current_scope()))
    except NotFound:
        raise RequestError(422, "body.input.parameters.rollout", f"No rollout {name!r}.",
                           name) from None
    try:
        tree = filtering.parse(filter_text) if filter_text else None
        found = store.ready_clusters(doc, tree, turns, MAX_INTEGRATION_CLUSTERS)
    except BadFilter as error:
        raise RequestError(422, "body.input.parameters.filter", error.detail,
                           filter_text) from None
    if found is None:
        raise RequestError(422, "body.input.parameters.rollout", f"More than "
                           f"{MAX_INTEGRATION_CLUSTERS:,} clusters may upgrade now: narrow "
                           "the filter (an integration's list is never truncated).", name)
    return found
