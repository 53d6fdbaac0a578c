"""Access control: bearer tokens, roles and organization scope.

Every route needs `Authorization: Bearer <token>` except health, readiness,
the API documentation and the JSON Schemas (`/metrics` needs a reader). Roles rank reader < writer <
admin; `required_role` says which a request needs. A token scoped to an
organization passes that scope to every store call (`current_scope`), so the
store's own queries keep other organizations' records out of reach.
"""
import hmac
import logging
import secrets
from dataclasses import dataclass

from flask import current_app, g, request

from inventory.errors import Forbidden, Unauthorized
from inventory.store import get_store
from inventory.store.tokens import TOKEN_PREFIX
from inventory.tokens_cli import tokens_cli

log = logging.getLogger("inventory")

ROLES = ("reader", "writer", "admin")
_RANK = {role: rank for rank, role in enumerate(ROLES)}
OPEN_BLUEPRINTS = {"meta", "api-docs", "docs-assets"}  # health, readiness, schemas; the docs
_READ_METHODS = {"GET", "HEAD"}


@dataclass(frozen=True)
class Principal:
    key: str  # what identifies the credential: the token's id
    name: str
    role: str
    organization: str | None = None  # the scope, if any


def required_role(blueprint, method):
    """The least role that may make this request."""
    if blueprint == "tokens":
        return "admin"
    if method in _READ_METHODS:
        return "reader"
    return "admin" if blueprint == "organizations" else "writer"


def _resolve(secret):
    admin_token = current_app.extensions["inventory.admin_token"]
    if admin_token and hmac.compare_digest(secret.encode(), admin_token.encode()):
        return Principal("env:INVENTORY_ADMIN_TOKEN", "admin", "admin")
    record = get_store().tokens.authenticate(secret)
    if record is None:
        return None
    return Principal(record["id"], record["name"], record["role"], record["organization"])


def authenticate():
    """before_request: who is calling, and may they do this?"""
    if request.url_rule is None or request.blueprint in OPEN_BLUEPRINTS \
            or request.method == "OPTIONS":
        return  # unknown routes answer 404/405; OPTIONS reveals only `Allow`
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    secret = secret.strip()
    if scheme.lower() != "bearer" or not secret:
        raise Unauthorized("This request needs an 'Authorization: Bearer <token>' header.")
    principal = _resolve(secret)
    if principal is None:
        raise Unauthorized("The token is unknown or revoked.", invalid_token=True)
    needed = required_role(request.blueprint, request.method)
    if _RANK[principal.role] < _RANK[needed]:
        raise Forbidden(f"This request needs the {needed} role; the token "
                        f"{principal.name!r} has {principal.role}.")
    g.principal = principal


def current_principal():
    return g.principal


def current_scope():
    """The organization the caller is confined to, or None."""
    return g.principal.organization


def init_app(app, config):
    admin_token = config.INVENTORY_ADMIN_TOKEN
    if not admin_token and config.embedded and config.ANNOUNCE:
        admin_token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        # printed, never logged: logs must not hold tokens
        print(f"\n  A local admin token, valid while this process lives:\n\n    {admin_token}\n",
              flush=True)
    elif not admin_token and not config.embedded and config.ANNOUNCE:
        log.warning("No INVENTORY_ADMIN_TOKEN is set. Unless tokens exist in the database, "
                    "every request will be refused (401). Make one with: flask --app app "
                    "tokens create --name NAME --role admin")
    app.extensions["inventory.admin_token"] = admin_token
    app.before_request(authenticate)
    app.cli.add_command(tokens_cli)
