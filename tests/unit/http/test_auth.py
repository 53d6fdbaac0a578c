"""inventory.http.auth, on its own: a bearer token's Principal (the
bootstrap admin's secret, a token's record, None for an unknown one),
looked up once per request; a console session resolved to its token's
Principal (ended with an old admin secret, refused once its token is
revoked); authentication's refusals (no token, an unknown one, a role too
low; open operations and OPTIONS pass) and what it keeps of the caller
(its scope, its credential's digest); a local start's admin token, kept
0600 in the data directory (refused when others may read it), never
logged. Through HTTP: tests/api/test_auth.py,
tests/api/test_console_access.py."""
import hashlib
import logging
import pathlib

import pytest
from flask import g

from inventory.core.errors import NotAllowed, NotAuthenticated
from inventory.http import auth
from inventory.http.auth import BOOTSTRAP_ADMIN_KEY, SESSION_COOKIE, Principal
from inventory.http.gate import Passage
from tests.conftest import ADMIN_TOKEN, make_config

ADMIN = Principal(BOOTSTRAP_ADMIN_KEY, "admin", "admin")


@pytest.fixture
def token(client):
    """`token(role, organization=None)`: a new token's (secret, record)."""
    def make(role, organization=None):
        body = {"name": f"t-{role}", "role": role}
        if organization:
            body["organization"] = organization
        made = client.post("/tokens", json=body)
        assert made.status_code == 201, made.get_json()
        record = made.get_json()
        return record["token"], record
    return make


def bearer(secret):
    return {"Authorization": f"Bearer {secret}"}


def test_the_admin_secret_is_the_bootstrap_admin_and_a_tokens_is_its_record(passage, token):
    passage()
    assert auth.principal_of_secret(ADMIN_TOKEN) == ADMIN
    secret, record = token("reader")
    assert auth.principal_of_secret(secret) == Principal(record["id"], "t-reader", "reader")
    assert auth.principal_of_secret("not-a-token") is None
    assert auth.principal_of_secret(ADMIN_TOKEN + "x") is None


@pytest.mark.parametrize("header", ["bearer {}", "BEARER  {} ", "Bearer {}"])
def test_the_bearer_scheme_is_read_whatever_its_case_and_spaces(passage, header):
    assert auth.caller(passage(headers={"Authorization": header.format(ADMIN_TOKEN)})) == ADMIN


@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer   ", f"Basic {ADMIN_TOKEN}",
                                    ADMIN_TOKEN])
def test_no_bearer_secret_is_no_caller(passage, header):
    assert auth.caller(passage(headers={"Authorization": header} if header is not None
                               else {})) is None


def test_the_caller_is_looked_up_once_per_request(passage, token, client):
    secret, record = token("writer")
    entered = passage(headers=bearer(secret))
    assert auth.caller(entered).key == record["id"]
    assert client.delete(f"/tokens/{record['id']}").status_code == 204  # revoked meanwhile
    assert auth.caller(entered).key == record["id"]  # kept in the Passage
    assert auth.caller(passage(headers=bearer(secret))) is None  # the next request


def test_authentication_keeps_the_caller_for_the_request(passage, token, store, inventory):
    organization = inventory.org()["id"]
    secret, record = token("reader", organization)
    entered = passage(headers=bearer(secret))
    assert auth.authenticate(entered) is None
    assert g.principal == entered.principal == auth.current_principal()
    assert auth.current_scope() == organization


def test_no_token_is_refused_saying_which_header_is_needed(passage):
    with pytest.raises(NotAuthenticated, match="'Authorization: Bearer <token>'") as refused:
        auth.authenticate(passage())
    assert refused.value.invalid_token is False


def test_an_unknown_token_is_refused_as_an_invalid_token(passage):
    with pytest.raises(NotAuthenticated, match="unknown or revoked") as refused:
        auth.authenticate(passage(headers=bearer("nope")))
    assert refused.value.invalid_token is True


@pytest.mark.parametrize("role, method, path, allowed", [
    ("reader", "GET", "/organizations", True), ("reader", "POST", "/kubeclusters", False),
    ("writer", "POST", "/kubeclusters", True), ("writer", "POST", "/organizations", False),
    ("admin", "POST", "/organizations", True)])
def test_a_role_below_the_operations_is_not_allowed(passage, token, role, method, path,
                                                    allowed):
    secret, _ = token(role)
    entered = passage(path, method=method, headers=bearer(secret))
    if allowed:
        auth.authenticate(entered)
        assert entered.principal.role == role
    else:
        with pytest.raises(NotAllowed, match=f"has {role}"):
            auth.authenticate(entered)
        assert entered.principal is None


@pytest.mark.parametrize("method, path", [("GET", "/healthz"), ("OPTIONS", "/organizations"),
                                          ("GET", "/no-such-route")])
def test_open_operations_options_and_unknown_routes_pass_without_a_token(passage, method,
                                                                        path):
    entered = passage(path, method=method, headers=bearer("nope"))
    assert auth.authenticate(entered) is None and entered.principal is None
    assert entered.caller is Passage.NOT_LOOKED_UP  # no token read for them


def test_only_the_bootstrap_admins_credential_has_a_digest(passage):
    passage()
    assert auth.is_bootstrap_admin(ADMIN) and not auth.is_bootstrap_admin(None)
    assert auth.credential_digest(ADMIN) == hashlib.sha256(ADMIN_TOKEN.encode()).hexdigest()
    reader = Principal("tok_1", "r", "reader")
    assert not auth.is_bootstrap_admin(reader) and auth.credential_digest(reader) is None


def cookie(session_id):
    return {"Cookie": f"{SESSION_COOKIE}={session_id}"}


def test_a_console_session_is_its_tokens_principal_until_the_token_is_revoked(
        passage, token, store, client):
    secret, record = token("reader")
    session_id, _ = store.sessions.start(record["id"])
    entered = passage("/events", headers=cookie(session_id))
    assert auth.caller(entered) == Principal(record["id"], "t-reader", "reader")
    assert entered.session["token"] == record["id"]
    client.delete(f"/tokens/{record['id']}")
    assert auth.caller(passage("/events", headers=cookie(session_id))) is None


def test_a_session_counts_only_where_the_operation_takes_one(passage, token, store):
    _, record = token("reader")
    session_id, _ = store.sessions.start(record["id"])
    assert auth.caller(passage("/organizations", headers=cookie(session_id))) is None
    assert auth.caller(passage("/events", headers=cookie("x" * 40))) is None  # unknown
    assert auth.caller(passage("/events")) is None  # no cookie


def test_an_admin_session_of_another_secret_is_ended(passage, store):
    passage()
    current = auth.credential_digest(ADMIN)
    kept, _ = store.sessions.start(BOOTSTRAP_ADMIN_KEY, current)
    old, _ = store.sessions.start(BOOTSTRAP_ADMIN_KEY, hashlib.sha256(b"old").hexdigest())
    assert auth.caller(passage("/events", headers=cookie(kept))) == ADMIN
    assert auth.caller(passage("/events", headers=cookie(old))) is None
    assert store.sessions.find(old) is None  # ended, not only refused
    assert store.sessions.find(kept) is not None


def test_at_start_the_sessions_of_other_admin_secrets_end(app, store):
    with app.app_context():
        other, _ = store.sessions.start(BOOTSTRAP_ADMIN_KEY, "digest-of-another-secret")
        none, _ = store.sessions.start(BOOTSTRAP_ADMIN_KEY, None)
        kept, _ = store.sessions.start(BOOTSTRAP_ADMIN_KEY, auth.credential_digest(ADMIN))
        auth.end_other_admin_secrets_sessions(store)
        assert store.sessions.find(other) is None and store.sessions.find(none) is None
        assert store.sessions.find(kept) is not None


def local_start(app, data_dir):
    """auth's part of a local start (embedded store, no INVENTORY_ADMIN_TOKEN,
    announced), with `data_dir` as INVENTORY_DATA_DIR (None: none); returns
    the admin token it settled on."""
    config = make_config(INVENTORY_ADMIN_TOKEN=None, ANNOUNCE=True,
                         INVENTORY_DATA_DIR=None if data_dir is None else str(data_dir))
    auth.init_app(app, config)
    return app.extensions["inventory.admin_token"]


def test_a_local_admin_token_is_kept_in_the_data_directory_0600(app, tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="inventory"):
        first = local_start(app, tmp_path)
    assert "mode 0600" in caplog.text
    kept = tmp_path / auth.ADMIN_TOKEN_FILE
    assert kept.read_text() == first + "\n" and kept.stat().st_mode & 0o777 == 0o600
    assert first not in caplog.text  # never in the logs
    assert local_start(app, tmp_path) == first  # the next start finds it
    kept.unlink()
    assert local_start(app, tmp_path) not in (first, None)  # deleted: a new one


def test_a_kept_admin_token_others_may_read_stops_the_start(app, tmp_path):
    local_start(app, tmp_path)
    (tmp_path / auth.ADMIN_TOKEN_FILE).chmod(0o644)
    with pytest.raises(RuntimeError, match="may be read by others .mode 644."):
        local_start(app, tmp_path)


def test_without_a_data_directory_the_local_admin_token_goes_to_a_new_0600_file(app, caplog):
    """Off a terminal and with no data directory: a file of its own in the
    temporary folder, which the log line names."""
    with caplog.at_level(logging.WARNING, logger="inventory"):
        token = local_start(app, None)
    said = [record for record in caplog.records if "local admin token" in record.getMessage()]
    path = pathlib.Path(said[-1].args[1])
    try:
        assert path.read_text() == token + "\n" and path.stat().st_mode & 0o777 == 0o600
        assert token not in caplog.text
    finally:
        path.unlink()
