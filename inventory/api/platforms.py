from flask import url_for
from flask.views import MethodView

from inventory.api.common import list_page, platform_key
from inventory.api.conditional import if_match, read, with_etag
from inventory.auth import current_principal, current_scope
from inventory.api.parser import Blueprint
from inventory.store import get_store
from schemas.common import DeleteArgsSchema, ListArgsSchema
from schemas.platforms import KubePlatformListSchema, KubePlatformPatchSchema, KubePlatformSchema

blp = Blueprint("kubeplatforms", __name__, url_prefix="/kubeplatforms",
                description="KubePlatforms: a cloud and control plane provider of an organization.")

IMMUTABLE = ("name", "organization")


@blp.route("")
class KubePlatforms(MethodView):
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, KubePlatformListSchema)
    def get(self, args):
        """List platforms, in name order"""
        return list_page("kubeplatforms", args, get_store().platforms.list)

    @blp.arguments(KubePlatformSchema)
    @blp.response(201, KubePlatformSchema)
    def post(self, body):
        """Create a platform"""
        platform = get_store().platforms.create(body, current_principal().name, current_scope())
        location = url_for(".KubePlatform", platform=platform["name"], _external=True)
        return with_etag(platform, 201, {"Location": location})


@blp.route("/<platform>")
class KubePlatform(MethodView):
    @blp.response(200, KubePlatformSchema)
    def get(self, platform):
        """Read a platform"""
        return read(get_store().platforms.get(platform_key(platform), current_scope()))

    @blp.arguments(KubePlatformPatchSchema)
    @blp.response(200, KubePlatformSchema)
    def patch(self, changes, platform):
        """Change some fields of a platform (not its name or organization)"""
        immutable = {field: changes.pop(field) for field in IMMUTABLE if field in changes}
        return with_etag(get_store().platforms.update(
            platform_key(platform), changes, current_principal().name, immutable,
            current_scope(), if_match()))

    @blp.arguments(DeleteArgsSchema, location="query")
    @blp.response(204)
    def delete(self, args, platform):
        """Delete a platform (with force=true, its clusters and their scans)"""
        get_store().platforms.delete(platform_key(platform), force=args["force"],
                                     scope=current_scope(), revisions=if_match())
