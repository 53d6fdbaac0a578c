from flask import url_for
from flask.views import MethodView

from inventory.api.common import list_page, org_key
from inventory.api.conditional import if_match, read, with_etag
from inventory.auth import current_principal, current_scope
from inventory.api.parser import Blueprint
from inventory.store import get_store
from schemas.common import DeleteArgsSchema, ListArgsSchema
from schemas.organizations import (OrganizationListSchema, OrganizationPatchSchema,
                                   OrganizationSchema)

blp = Blueprint("organizations", __name__, url_prefix="/organizations",
                description="Organizations: one customer each.")


@blp.route("")
class Organizations(MethodView):
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, OrganizationListSchema)
    def get(self, args):
        """List organizations, in id (creation) order"""
        return list_page("organizations", args, get_store().organizations.list)

    @blp.arguments(OrganizationSchema)
    @blp.response(201, OrganizationSchema)
    def post(self, body):
        """Create an organization (admins not scoped to one)"""
        org = get_store().organizations.create(body, current_principal().name, current_scope())
        return with_etag(org, 201, {"Location": url_for(".Organization", org=org["id"],
                                                        _external=True)})


@blp.route("/<org>")
class Organization(MethodView):
    @blp.response(200, OrganizationSchema)
    def get(self, org):
        """Read an organization"""
        return read(get_store().organizations.get(org_key(org), current_scope()))

    @blp.arguments(OrganizationPatchSchema)
    @blp.response(200, OrganizationSchema)
    def patch(self, changes, org):
        """Change some fields of an organization"""
        return with_etag(get_store().organizations.update(
            org_key(org), changes, current_principal().name, scope=current_scope(),
            revisions=if_match()))

    @blp.arguments(DeleteArgsSchema, location="query")
    @blp.response(204)
    def delete(self, args, org):
        """Delete an organization (with force=true, all its platforms, clusters and scans)"""
        get_store().organizations.delete(org_key(org), force=args["force"], scope=current_scope(),
                                         revisions=if_match())
