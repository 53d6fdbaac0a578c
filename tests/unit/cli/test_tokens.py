"""`flask --app app tokens` (inventory/cli/tokens.py): refused without a
database (a token in a throwaway store would reach no server); with one,
made, listed without its secret, revoked."""
import re

import pytest

from tests.conftest import REAL_MONGO, client_with


def test_without_a_database_each_command_says_why_it_will_not(runner, app):
    if REAL_MONGO:
        pytest.skip("MONGODB_URI is set: the commands run")
    for args in (["tokens", "create", "--name", "ci", "--role", "reader"], ["tokens", "list"],
                 ["tokens", "revoke", "tok_x"]):
        result = runner.invoke(args=args)
        assert result.exit_code == 1 and "MONGODB_URI is not set" in result.output, args


@pytest.fixture
def database(app):
    """The app's store stands for the server's database (here, the embedded one)."""
    app.config["MONGODB_URI"] = app.config["MONGODB_URI"] or "mongodb://the-servers-database"
    return app


def test_a_token_is_made_listed_without_its_secret_and_revoked(database, runner):
    made = runner.invoke(args=["tokens", "create", "--name", "ci", "--role", "writer"])
    assert made.exit_code == 0, made.output
    token_id = re.search(r"Made token (\S+) \(ci, writer\)", made.output).group(1)
    secret = made.output.strip().splitlines()[-1]
    assert client_with(database, secret).get("/organizations").status_code == 200
    listed = runner.invoke(args=["tokens", "list"])
    assert token_id in listed.output and "writer" in listed.output
    assert secret not in listed.output
    revoked = runner.invoke(args=["tokens", "revoke", token_id])
    assert revoked.exit_code == 0 and f"Revoked {token_id}." in revoked.output
    assert client_with(database, secret).get("/organizations").status_code == 401


def test_a_refusal_of_the_store_is_one_line(database, runner):
    result = runner.invoke(args=["tokens", "revoke", "tok_nope"])
    assert result.exit_code == 1 and result.output.startswith("Error: ")
    bad_role = runner.invoke(args=["tokens", "create", "--name", "x", "--role", "owner"])
    assert bad_role.exit_code == 2
