"""/rollouts: upgrade waves of the fleet toward a target minor, stage by stage."""
from flask import url_for
from flask.views import MethodView

from inventory.core import filtering
from inventory.core.errors import BadFilter
from inventory.core.rollouts import member_filter
from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.conditional import if_match, read, with_etag
from inventory.http.csv_export import RecordColumns
from inventory.http.errors import RequestError
from inventory.http.generic import RecordList
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.rollouts.spec import SPEC
from inventory.store import get_store
from schemas.rollouts import (
    FILTER_EXAMPLES,
    RolloutApproveSchema,
    RolloutClusterListArgsSchema,
    RolloutClusterListSchema,
    RolloutClusterSchema,
    RolloutCreateSchema,
    RolloutListSchema,
    RolloutPatchSchema,
    RolloutSchema,
)

# Full paths, no url_prefix: Flask would join a prefix and `:approve` with a "/".
blp = Blueprint("rollouts", __name__, path_keys=(SPEC.path_key,),
                description="Rollouts: the fleet's next minor version, stage by stage. The "
                            "inventory upgrades nothing: it says which clusters may go now.")
listing = RecordList.of("RolloutList", RolloutListSchema, FILTER_EXAMPLES, SPEC.orderings)
_CLUSTER_COLUMNS = RecordColumns(RolloutClusterSchema(nested=True))
_BY_NAME = {"rollout": "$response.body#/name"}


def _checked(body):
    """The body with each stage's filter compiled as the clusters' (a 422
    at `body.stages.<n>.filter`), and an organization for a caller who may
    not make a fleet-wide rollout (422 at `body.organization`)."""
    clusters = get_store().clusters
    for index, stage in enumerate(body.get("stages") or ()):
        if stage["filter"]:
            try:
                clusters.compile_filter(filtering.parse(stage["filter"]))
            except BadFilter as error:
                raise RequestError(422, f"body.stages.{index}.filter", error.detail,
                                   stage["filter"]) from None
    return body


def _checked_new(body):
    principal = current_principal()
    if principal.organization is None and body.get("organization") is None \
            and principal.role != "admin":
        raise RequestError(422, "body.organization", "Required: only an unscoped admin may "
                           "make a fleet-wide rollout (organization null).", None)
    return _checked(body)


@blp.route("/rollouts")
class Rollouts(MethodView):
    @blp.arguments(listing.list_args, location="query")
    @blp.response(200, RolloutListSchema)
    @operation("listRollouts", role="reader", errors=(422,), csv=True)
    def get(self, args):
        """List rollouts

        Each with its status as last worked out (`status.computed_on`:
        within seconds for an active rollout); read one rollout for its
        counts as of now."""
        return list_page("rollouts", args, get_store().rollouts.list, SPEC.orderings,
                         listing.columns, "rollouts.csv")

    @blp.arguments(RolloutCreateSchema)
    @blp.response(201, RolloutSchema)
    @operation("createRollout", role="writer", etag=True, idempotency_key=True,
               errors=(409, 422), links={
                   "get": ("getRollout", _BY_NAME), "clusters": ("listRolloutClusters", _BY_NAME),
                   "approve": ("approveRollout", _BY_NAME)})
    def post(self, body):
        """Make a rollout

        Its first stage's turn comes at once. A scoped caller's rollout is its
        organization's (its clusters only); an unscoped admin's may be
        fleet-wide (`organization` null: every organization's clusters)."""
        record = get_store().rollouts.create(_checked_new(body), current_principal().name,
                                             current_scope())
        location = url_for(".Rollout", rollout=record["name"], _external=True)
        return with_etag(record, 201, {"Location": location})


@blp.route("/rollouts/<rollout>")
class Rollout(MethodView):
    @blp.response(200, RolloutSchema)
    @operation("getRollout", role="reader", if_none_match=True, etag=True, errors=(404, 422))
    def get(self, rollout):
        """Read a rollout, with its status now

        Its clusters counted now by stage and state, and its stages moved
        forward if their turn came (the service's background look does
        that within seconds anyway)."""
        return read(get_store().rollouts.get(rollout, current_scope()))

    @blp.arguments(RolloutPatchSchema, required=False)
    @blp.response(200, RolloutSchema)
    @operation("updateRollout", role="writer", if_match=True, etag=True,
               errors=(404, 409, 412, 422))
    def patch(self, changes, rollout):
        """Change a rollout

        `title`, `description`, `paused` and `stages` (a stage keeps its
        progress by name; a new one starts waiting). `name`,
        `organization` and `target` cannot change."""
        return with_etag(get_store().rollouts.update(
            rollout, _checked(changes), current_principal().name, current_scope(),
            revisions=if_match()))

    @blp.response(204)
    @operation("deleteRollout", role="writer", if_match=True, errors=(404, 412, 422))
    def delete(self, rollout):
        """Delete a rollout"""
        get_store().rollouts.delete(rollout, scope=current_scope(), revisions=if_match())


@blp.route("/rollouts/<rollout>:approve")
class RolloutApproval(MethodView):
    @blp.arguments(RolloutApproveSchema)
    @blp.response(200, RolloutSchema)
    @operation("approveRollout", role="writer", etag=True, errors=(404, 409, 422))
    def post(self, body, rollout):
        """Approve a held stage

        The stage opens (when the rollout is paused, once it is resumed):
        its ready clusters may upgrade. 409 when the stage is not held
        (waiting for an earlier stage, or open already); 422 for no such
        stage."""
        return with_etag(get_store().rollouts.approve(rollout, body["stage"],
                                                      current_principal().name,
                                                      current_scope()))


@blp.route("/rollouts/<rollout>/clusters")
class RolloutClusters(MethodView):
    @blp.arguments(RolloutClusterListArgsSchema, location="query")
    @blp.response(200, RolloutClusterListSchema)
    # the console links its CSV, called with the page's session
    @operation("listRolloutClusters", role="reader", errors=(404, 422), csv=True, session=True)
    def get(self, args, rollout):
        """List a rollout's clusters

        Each cluster of a stage (the first whose filter matches it), with
        its state toward the target (`done`, `ready`, `blocked`, `behind`),
        its minor and its readiness (the checks not passing), in stage order
        then name. `filter` takes `stage` and `state`."""
        store = get_store().rollouts
        doc = store.get_doc(rollout, current_scope())
        keep = member_filter(args.get("filter"))
        return list_page(f"rollouts/{doc['_id']}/clusters", args,
                         lambda request: store.members_page(doc, request, keep), None,
                         _CLUSTER_COLUMNS, f"rollouts-{doc['_id']}-clusters.csv")
