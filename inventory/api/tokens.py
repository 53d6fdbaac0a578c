from flask import url_for
from flask.views import MethodView

from inventory.api.common import list_page, token_key
from inventory.api.parser import Blueprint
from inventory.auth import current_principal, current_scope
from inventory.errors import Forbidden, Unprocessable
from inventory.store import get_store
from schemas.common import ListArgsSchema
from schemas.tokens import NewTokenSchema, TokenListSchema, TokenSchema

blp = Blueprint("tokens", __name__, url_prefix="/tokens",
                description="API tokens (admins only). Secrets are shown once and stored as hashes.")


@blp.route("")
class Tokens(MethodView):
    @blp.arguments(ListArgsSchema, location="query")
    @blp.response(200, TokenListSchema)
    def get(self, args):
        """List tokens (never their secrets)"""
        return list_page("tokens", args, get_store().tokens.list)

    @blp.arguments(TokenSchema)
    @blp.response(201, NewTokenSchema)
    def post(self, body):
        """Make a token; the answer holds its secret, this once"""
        store, scope = get_store(), current_scope()
        if scope is not None:
            if body["organization"] not in (None, scope):
                raise Forbidden("A token scoped to one organization can only make "
                                "tokens for that organization.")
            body["organization"] = scope
        org = body["organization"]
        if org is not None and not store.organizations.is_live(org):
            raise Unprocessable("body.organization", "No such organization.", org)
        record, secret = store.tokens.create(body, current_principal().name)
        return ({**record, "token": secret}, 201,
                {"Location": url_for(".Token", token=record["id"], _external=True)})


@blp.route("/<token>")
class Token(MethodView):
    @blp.response(200, TokenSchema)
    def get(self, token):
        """Read a token's record"""
        return get_store().tokens.get(token_key(token), current_scope())

    @blp.response(204)
    def delete(self, token):
        """Revoke a token, effective from the next request"""
        get_store().tokens.revoke(token_key(token), current_scope())
