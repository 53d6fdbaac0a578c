"""/organizations: one customer each."""
from flask.views import MethodView

import schemas.organizations
from inventory.http.blueprint import Blueprint
from inventory.http.generic import ResourceViews
from inventory.resources.organizations.spec import SPEC

blp = Blueprint("organizations", __name__, path_keys=(SPEC.path_key,), url_prefix="/organizations",
                description="Organizations: one customer each.")
views = ResourceViews(blp, SPEC, schemas.organizations, "Organization", writer="admin")

_BY_ID = {"org": "$response.body#/id"}


@blp.route("")
class Organizations(MethodView):
    @views.listing()
    def get(self):
        """List organizations, in id (creation) order

        A token scoped to an organization sees only that one."""

    @views.creating(links={
        "get": ("getOrganization", _BY_ID), "update": ("updateOrganization", _BY_ID),
        "delete": ("deleteOrganization", _BY_ID),
        # what is made in it next names it in its body
        "createPlatform": ("createKubePlatform", {}, {"organization": "$response.body#/id"}),
        "createToken": ("createToken", {}, {"organization": "$response.body#/id"})})
    def post(self):
        """Create an organization

        Admins not scoped to an organization only. Answers 201 with the record,
        its `Location` and `ETag`."""


@blp.route("/<org>")
class Organization(MethodView):
    @views.reading()
    def get(self):
        """Read an organization

        Answers 304 with no body when `If-None-Match` names its ETag."""

    @views.updating()
    def patch(self):
        """Change some fields of an organization

        A JSON merge patch: absent fields stay as they are. With `If-Match`,
        only if the record is still at that ETag (else 412)."""

    @views.deleting()
    def delete(self):
        """Delete an organization

        With platforms, only with `force=true`, which deletes everything
        below it (platforms, clusters, scans) and revokes its tokens; else 409.
        Repeating a delete that was interrupted finishes it."""
