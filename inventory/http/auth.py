"""Access control: bearer tokens, roles and organization scope.

Each operation declares the least role that may call it, or none for the
open ones (`inventory.http.operations`). Roles rank reader < writer < admin
(`inventory.core.roles`). A token scoped to an organization passes that scope to
every store call (`current_scope`), so the store's own queries keep other
organizations' records out of reach.

The console's pages (inventory/ui) are called with a session instead: a
cookie holding a random session id (never the token), which resolves here,
on every request, to its token's Principal (the token read again, so a
revoke ends the session at once). From there on a signed-in request passes
the same layers as a bearer one: its rate limits, role and scope.
"""
import hashlib
import hmac
import logging
import os
import sys
import tempfile
from dataclasses import dataclass

from flask import current_app, g

from inventory.core.errors import NotAllowed, NotAuthenticated
from inventory.core.roles import allows
from inventory.store import get_store
from inventory.store.event_documents import acting_as

log = logging.getLogger("inventory")


BOOTSTRAP_ADMIN_KEY = "env:INVENTORY_ADMIN_TOKEN"
SESSION_COOKIE = "inventory_session"  # the console's session id (inventory.store.sessions)


@dataclass(frozen=True)
class Principal:
    key: str  # what identifies the credential: the token's id
    name: str
    role: str
    organization: str | None = None  # the scope, if any


def principal_of_secret(secret):
    """The Principal of a token's secret, or None (unknown or revoked)."""
    admin_token = current_app.extensions["inventory.admin_token"]
    if admin_token and hmac.compare_digest(secret.encode(), admin_token.encode()):
        return Principal(BOOTSTRAP_ADMIN_KEY, "admin", "admin")
    record = get_store().tokens.authenticate(secret)
    if record is None:
        return None
    return Principal(record["id"], record["name"], record["role"], record["organization"])


def _bearer_secret(current):
    scheme, _, secret = current.headers.get("Authorization", "").partition(" ")
    secret = secret.strip()
    return secret if scheme.lower() == "bearer" and secret else None


def caller(passage):
    """The Principal of the request's bearer token, or None (no token, an
    unknown or revoked one), looked up once per request (kept in the gate's
    Passage): the rate limiter (inventory.http.rate_limits) keys requests by
    it before they are authenticated."""
    principal = passage.caller
    if principal is passage.NOT_LOOKED_UP:
        secret = _bearer_secret(passage.request)
        if secret is not None:
            principal = principal_of_secret(secret)
        elif passage.operation is not None and passage.operation.signed_in:
            principal = _signed_in(passage)
        else:
            principal = None
        passage.caller = principal
    return principal


def credential_digest(principal):
    """What a session keeps of a credential that is no record (the bootstrap
    admin's): a digest of its secret, so that a new secret ends the old
    one's sessions; None for a token (its record is read instead)."""
    return _admin_digest() if is_bootstrap_admin(principal) else None


def _admin_digest():
    admin_token = current_app.extensions["inventory.admin_token"]
    return hashlib.sha256(admin_token.encode()).hexdigest() if admin_token else None


def _signed_in(passage):
    """The Principal of the request's console session, or None (no cookie,
    an ended or idle session, or a token revoked since): kept in the
    Passage with the session, whose form token the console checks."""
    session_id = passage.request.cookies.get(SESSION_COOKIE)
    if not session_id:
        return None
    store = get_store()
    session = store.sessions.find(session_id)
    if session is None:
        return None
    if session["token"] == BOOTSTRAP_ADMIN_KEY:
        expected = _admin_digest()
        if not expected or not session["credential"] or not hmac.compare_digest(
                session["credential"], expected):
            store.sessions.end(session_id)  # ended: the old secret set back revives it not
            return None
        principal = Principal(BOOTSTRAP_ADMIN_KEY, "admin", "admin")
    else:
        record = store.tokens.live_record(session["token"])
        if record is None:
            return None
        principal = Principal(record["id"], record["name"], record["role"],
                              record["organization"])
    passage.session = session
    return principal


def end_other_admin_secrets_sessions(store):
    """End the console sessions signed in with another bootstrap admin secret
    than INVENTORY_ADMIN_TOKEN's now (all of them without one): at start on
    the embedded store, in the release step on MongoDB (inventory.cli.indexes)."""
    store.sessions.end_all_of(BOOTSTRAP_ADMIN_KEY, unless_credential=_admin_digest() or "")


def is_bootstrap_admin(principal):
    return principal is not None and principal.key == BOOTSTRAP_ADMIN_KEY


def authenticate(passage):
    """The gate's way in: who is calling, and may they do this?"""
    declared = passage.operation
    if declared is None or declared.role is None or passage.request.method == "OPTIONS":
        return  # unknown routes answer 404/405; OPTIONS reveals only `Allow`
    principal = caller(passage)
    if principal is None:
        if declared.page:
            raise NotAuthenticated("Sign in to see this page.")
        if _bearer_secret(passage.request) is None:
            raise NotAuthenticated("This request needs an 'Authorization: Bearer <token>' "
                                   "header.")
        raise NotAuthenticated("The token is unknown or revoked.", invalid_token=True)
    if not allows(principal.role, declared.role):
        raise NotAllowed(f"This request needs the {declared.role} role; the token "
                        f"{principal.name!r} has {principal.role}.")
    g.principal = passage.principal = principal
    acting_as(principal.name)  # the actor of this request's events


def current_principal():
    return g.principal


def current_scope():
    """The organization the caller is confined to, or None."""
    return g.principal.organization


ADMIN_TOKEN_FILE = "admin-token"  # in INVENTORY_DATA_DIR


def _kept_admin_token(config):
    """The admin token kept in INVENTORY_DATA_DIR by an earlier start, or None.
    With a data directory the token lives there, like the data: it survives
    restarts, and deleting the file makes a new one at the next start."""
    if not config.journaled:
        return None
    path = os.path.join(config.INVENTORY_DATA_DIR, ADMIN_TOKEN_FILE)
    try:
        with open(path, encoding="utf-8") as file:
            token = file.read().strip()
    except FileNotFoundError:
        return None
    if os.stat(path).st_mode & 0o077:
        raise RuntimeError(f"{path} may be read by others (mode "
                           f"{os.stat(path).st_mode & 0o777:o}): chmod 600 it, or delete it "
                           "for a new admin token.")
    return token or None


def _hand_over(token, config, kept):
    """Give the local admin token to whoever started the service, never to
    the logs (one JSON object per line, no secrets): on their terminal if
    stdout or stderr is one; with a data directory also in
    `INVENTORY_DATA_DIR/admin-token` (0600), where the next start finds it;
    off a terminal without one, in a new file in the temporary folder.
    A JSON line says where."""
    lasts = ("kept in the data directory: it lasts across restarts" if config.journaled
             else "valid while this process lives")
    path = None
    if config.journaled:
        os.makedirs(config.INVENTORY_DATA_DIR, exist_ok=True)
        path = os.path.join(config.INVENTORY_DATA_DIR, ADMIN_TOKEN_FILE)
        if not kept:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW,
                                 0o600)
            with os.fdopen(descriptor, "w") as file:
                os.fchmod(file.fileno(), 0o600)  # also when the file was there before
                file.write(token + "\n")
    for stream in (sys.stdout, sys.stderr):
        if stream.isatty():
            stream.write(f"\n  The local admin token ({lasts}):\n\n    {token}\n\n")
            stream.flush()
            log.warning("The local admin token is shown on the terminal, not in the logs%s.",
                        f"; it is kept in {os.path.abspath(path)} (mode 0600)" if path else "")
            return
    if path is None:
        descriptor, path = tempfile.mkstemp(prefix="inventory-admin-token-")  # mode 0600
        with os.fdopen(descriptor, "w") as file:
            file.write(token + "\n")
    log.warning("The local admin token (%s) is in %s (mode 0600), not in the logs.", lasts,
                os.path.abspath(path))


def init_app(app, config):
    admin_token = config.INVENTORY_ADMIN_TOKEN
    if not admin_token and config.embedded and config.ANNOUNCE:
        kept = _kept_admin_token(config)
        admin_token = kept or app.extensions["inventory.store"].tokens.new_secret()
        _hand_over(admin_token, config, kept)
    elif not admin_token and not config.embedded and config.ANNOUNCE:
        log.warning("No INVENTORY_ADMIN_TOKEN is set. Unless tokens exist in the database, "
                    "every request will be refused (401). Make one with: flask --app app "
                    "tokens create --name NAME --role admin")
    app.extensions["inventory.admin_token"] = admin_token
    if config.embedded:  # no release step runs for it (inventory.cli.indexes)
        with app.app_context():
            end_other_admin_secrets_sessions(app.extensions["inventory.store"])
