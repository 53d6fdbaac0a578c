"""/tokens: API tokens (admins only). Secrets are shown once, stored as hashes."""
from flask.views import MethodView

import schemas.tokens
from inventory.http.auth import current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.generic import ResourceViews
from inventory.http.operations import operation
from inventory.resources.tokens.spec import SPEC
from inventory.store import get_store

blp = Blueprint("tokens", __name__, path_keys=(SPEC.path_key,), url_prefix="/tokens",
                description="API tokens (admins only). Secrets are shown once and stored as hashes.")
views = ResourceViews(blp, SPEC, schemas.tokens, "Token", reader="admin", writer="admin",
                      etags=False)


@blp.route("")
class Tokens(MethodView):
    @views.listing()
    def get(self):
        """List tokens (never their secrets)"""

    @views.creating(secret_field="token", links={
        "get": ("getToken", {"id": "$response.body#/id"}),
        "revoke": ("revokeToken", {"id": "$response.body#/id"})})
    def post(self):
        """Make a token

        The answer holds its secret, this once (`Cache-Control: no-store`).
        A token scoped to an organization makes tokens of that organization
        only. Takes no `Idempotency-Key`: the secret is never stored to replay."""


@blp.route("/<id>")
class Token(MethodView):
    @views.reading()
    def get(self):
        """Read a token's record"""

    @blp.response(204)
    @operation("revokeToken", role="admin", errors=(404, 422))
    def delete(self, id):
        """Revoke a token, effective from the next request"""
        get_store().tokens.revoke(id, current_scope())
