"""/kubeplatforms: a cloud and control plane provider of an organization."""
from flask import url_for
from flask.views import MethodView

from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.conditional import if_match, read, with_etag
from inventory.http.generic import RecordList
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.platforms.spec import SPEC
from inventory.store import get_store
from schemas.common import DeleteArgsSchema
from schemas.platforms import (
    FILTER_EXAMPLES,
    KubePlatformCreateSchema,
    KubePlatformListSchema,
    KubePlatformPatchSchema,
    KubePlatformSchema,
)

blp = Blueprint("kubeplatforms", __name__, path_keys=(SPEC.path_key,), url_prefix="/kubeplatforms",
                description="KubePlatforms: a cloud and control plane provider of an organization.")
listing = RecordList.of("KubePlatformList", KubePlatformListSchema, FILTER_EXAMPLES, SPEC.orderings)

_BY_NAME = {"platform": "$response.body#/name"}


@blp.route("")
class KubePlatforms(MethodView):
    @blp.arguments(listing.list_args, location="query")
    @blp.response(200, KubePlatformListSchema)
    @operation("listKubePlatforms", role="reader", errors=(422,), csv=True)
    def get(self, args):
        """List platforms, in name order"""
        return list_page("kubeplatforms", args, get_store().platforms.list, SPEC.orderings,
                         listing.columns, "kubeplatforms.csv")

    @blp.arguments(KubePlatformCreateSchema)
    @blp.response(201, KubePlatformSchema)
    @operation("createKubePlatform", role="writer", etag=True, idempotency_key=True,
               errors=(409, 422), links={
                   "get": ("getKubePlatform", _BY_NAME), "update": ("updateKubePlatform", _BY_NAME),
                   "delete": ("deleteKubePlatform", _BY_NAME),
                   "createCluster": ("createKubeCluster", {}, {"platform": "$response.body#/name"})})
    def post(self, body):
        """Create a platform

        Its `organization` must exist (and be the caller's, for a scoped
        token); its `name` must be free (else 409)."""
        record = get_store().platforms.create(body, current_principal().name, current_scope())
        location = url_for(".KubePlatform", platform=record["name"], _external=True)
        return with_etag(record, 201, {"Location": location})


@blp.route("/<platform>")
class KubePlatform(MethodView):
    @blp.response(200, KubePlatformSchema)
    @operation("getKubePlatform", role="reader", if_none_match=True, etag=True, errors=(404, 422))
    def get(self, platform):
        """Read a platform

        Answers 304 with no body when `If-None-Match` names its ETag."""
        return read(get_store().platforms.get(platform, current_scope()))

    @blp.arguments(KubePlatformPatchSchema, required=False)
    @blp.response(200, KubePlatformSchema)
    @operation("updateKubePlatform", role="writer", if_match=True, etag=True,
               errors=(404, 409, 412, 422))
    def patch(self, changes, platform):
        """Change some fields of a platform

        A JSON merge patch; `name` and `organization` cannot change (422).
        With `If-Match`, only if the record is still at that ETag (else 412)."""
        return with_etag(get_store().platforms.update(
            platform, changes, current_principal().name, current_scope(), revisions=if_match()))

    # `force`: its clusters refuse an unforced delete (tests/unit/http/test_operations.py)
    @blp.arguments(DeleteArgsSchema, location="query")
    @blp.response(204)
    @operation("deleteKubePlatform", role="writer", if_match=True, errors=(404, 409, 412, 422))
    def delete(self, args, platform):
        """Delete a platform

        With clusters, only with `force=true`, which deletes them and their
        scans; else 409. Repeating a delete that was interrupted finishes it."""
        get_store().platforms.delete(platform, force=args["force"], scope=current_scope(),
                                     revisions=if_match())
