"""/kubeplatforms: a cloud and control plane provider of an organization."""
from flask.views import MethodView

import schemas.platforms
from inventory.http.blueprint import Blueprint
from inventory.http.generic import ResourceViews
from inventory.resources.platforms.spec import SPEC

blp = Blueprint("kubeplatforms", __name__, path_keys=(SPEC.path_key,), url_prefix="/kubeplatforms",
                description="KubePlatforms: a cloud and control plane provider of an organization.")
views = ResourceViews(blp, SPEC, schemas.platforms, "KubePlatform")

_BY_NAME = {"platform": "$response.body#/name"}


@blp.route("")
class KubePlatforms(MethodView):
    @views.listing()
    def get(self):
        """List platforms, in name order"""

    @views.creating(links={
        "get": ("getKubePlatform", _BY_NAME), "update": ("updateKubePlatform", _BY_NAME),
        "delete": ("deleteKubePlatform", _BY_NAME),
        "createCluster": ("createKubeCluster", {}, {"platform": "$response.body#/name"})})
    def post(self):
        """Create a platform

        Its `organization` must exist (and be the caller's, for a scoped
        token); its `name` must be free (else 409)."""


@blp.route("/<platform>")
class KubePlatform(MethodView):
    @views.reading()
    def get(self):
        """Read a platform

        Answers 304 with no body when `If-None-Match` names its ETag."""

    @views.updating()
    def patch(self):
        """Change some fields of a platform

        A JSON merge patch; `name` and `organization` cannot change (422).
        With `If-Match`, only if the record is still at that ETag (else 412)."""

    @views.deleting()
    def delete(self):
        """Delete a platform

        With clusters, only with `force=true`, which deletes them and their
        scans; else 409. Repeating a delete that was interrupted finishes it."""
