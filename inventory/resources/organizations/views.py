"""/organizations: one customer each."""
from flask import url_for
from flask.views import MethodView

from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.conditional import if_match, read, with_etag
from inventory.http.generic import RecordList
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.organizations.spec import SPEC
from inventory.store import get_store
from schemas.common import DeleteArgsSchema
from schemas.organizations import (
    FILTER_EXAMPLES,
    OrganizationCreateSchema,
    OrganizationListSchema,
    OrganizationPatchSchema,
    OrganizationSchema,
)

blp = Blueprint("organizations", __name__, path_keys=(SPEC.path_key,), url_prefix="/organizations",
                description="Organizations: one customer each.")
listing = RecordList.of("OrganizationList", OrganizationListSchema, FILTER_EXAMPLES, SPEC.orderings)

_BY_ID = {"org": "$response.body#/id"}


@blp.route("")
class Organizations(MethodView):
    @blp.arguments(listing.list_args, location="query")
    @blp.response(200, OrganizationListSchema)
    @operation("listOrganizations", role="reader", errors=(422,), csv=True)
    def get(self, args):
        """List organizations, in id (creation) order

        A token scoped to an organization sees only that one."""
        return list_page("organizations", args, get_store().organizations.list, SPEC.orderings,
                         listing.columns, "organizations.csv")

    @blp.arguments(OrganizationCreateSchema)
    @blp.response(201, OrganizationSchema)
    @operation("createOrganization", role="admin", etag=True, idempotency_key=True,
               errors=(409, 422), links={
                   "get": ("getOrganization", _BY_ID), "update": ("updateOrganization", _BY_ID),
                   "delete": ("deleteOrganization", _BY_ID),
                   # what is made in it next names it in its body
                   "createPlatform": ("createKubePlatform", {}, {"organization": "$response.body#/id"}),
                   "createToken": ("createToken", {}, {"organization": "$response.body#/id"})})
    def post(self, body):
        """Create an organization

        Admins not scoped to an organization only. Answers 201 with the record,
        its `Location` and `ETag`."""
        record = get_store().organizations.create(body, current_principal().name, current_scope())
        location = url_for(".Organization", org=record["id"], _external=True)
        return with_etag(record, 201, {"Location": location})


@blp.route("/<org>")
class Organization(MethodView):
    @blp.response(200, OrganizationSchema)
    @operation("getOrganization", role="reader", if_none_match=True, etag=True, errors=(404, 422))
    def get(self, org):
        """Read an organization

        Answers 304 with no body when `If-None-Match` names its ETag."""
        return read(get_store().organizations.get(org, current_scope()))

    @blp.arguments(OrganizationPatchSchema, required=False)
    @blp.response(200, OrganizationSchema)
    @operation("updateOrganization", role="admin", if_match=True, etag=True,
               errors=(404, 409, 412, 422))
    def patch(self, changes, org):
        """Change some fields of an organization

        A JSON merge patch: absent fields stay as they are. With `If-Match`,
        only if the record is still at that ETag (else 412)."""
        return with_etag(get_store().organizations.update(
            org, changes, current_principal().name, current_scope(), revisions=if_match()))

    # `force`: its platforms refuse an unforced delete (tests/unit/http/test_operations.py)
    @blp.arguments(DeleteArgsSchema, location="query")
    @blp.response(204)
    @operation("deleteOrganization", role="admin", if_match=True, errors=(404, 409, 412, 422))
    def delete(self, args, org):
        """Delete an organization

        With platforms, only with `force=true`, which deletes everything
        below it (platforms, clusters, scans) and revokes its tokens; else 409.
        Repeating a delete that was interrupted finishes it."""
        get_store().organizations.delete(org, force=args["force"], scope=current_scope(),
                                         revisions=if_match())
