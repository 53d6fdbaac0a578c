"""/tokens: API tokens (admins only). Secrets are shown once, stored as hashes."""
from flask import url_for
from flask.views import MethodView

from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.generic import RecordList
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.tokens.spec import SPEC
from inventory.store import get_store
from schemas.tokens import (
    FILTER_EXAMPLES,
    NewTokenSchema,
    TokenCreateSchema,
    TokenListSchema,
    TokenSchema,
)

blp = Blueprint("tokens", __name__, path_keys=(SPEC.path_key,), url_prefix="/tokens",
                description="API tokens (admins only). Secrets are shown once and stored as hashes.")
listing = RecordList.of("TokenList", TokenListSchema, FILTER_EXAMPLES, SPEC.orderings)


@blp.route("")
class Tokens(MethodView):
    @blp.arguments(listing.list_args, location="query")
    @blp.response(200, TokenListSchema)
    @operation("listTokens", role="admin", errors=(422,), csv=True)
    def get(self, args):
        """List tokens (never their secrets)"""
        return list_page("tokens", args, get_store().tokens.list, SPEC.orderings,
                         listing.columns, "tokens.csv")

    # no ETag and no Idempotency-Key: the secret is answered once, never stored to replay
    @blp.arguments(TokenCreateSchema)
    @blp.response(201, NewTokenSchema)
    @operation("createToken", role="admin", secret=True, errors=(422,), links={
        "get": ("getToken", {"id": "$response.body#/id"}),
        "revoke": ("revokeToken", {"id": "$response.body#/id"})})
    def post(self, body):
        """Make a token

        The answer holds its secret, this once (`Cache-Control: no-store`).
        A token scoped to an organization makes tokens of that organization
        only. Takes no `Idempotency-Key`: the secret is never stored to replay."""
        record, secret = get_store().tokens.create(body, current_principal().name,
                                                   current_scope())
        location = url_for(".Token", id=record["id"], _external=True)
        return {**record, "token": secret}, 201, {"Location": location}


@blp.route("/<id>")
class Token(MethodView):
    @blp.response(200, TokenSchema)
    @operation("getToken", role="admin", errors=(404, 422))
    def get(self, id):
        """Read a token's record"""
        return get_store().tokens.get(id, current_scope())

    @blp.response(204)
    @operation("revokeToken", role="admin", errors=(404, 422))
    def delete(self, id):
        """Revoke a token, effective from the next request"""
        get_store().tokens.revoke(id, current_scope())
