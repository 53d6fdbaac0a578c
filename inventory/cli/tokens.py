"""`flask --app app tokens create|list|revoke`: tokens from the command line."""
import click
from flask.cli import AppGroup

from inventory.core.errors import ServiceError
from inventory.core.roles import ROLES
from inventory.store import get_store
from inventory.store.pages import PageRequest

tokens_cli = AppGroup("tokens", help="Make, list and revoke API tokens (needs MONGODB_URI).")

EMBEDDED = ("MONGODB_URI is not set, so this command would use its own in-memory store, "
            "which vanishes when it exits: no server would ever see this token. Set "
            "MONGODB_URI to the server's database, or give the server "
            "INVENTORY_ADMIN_TOKEN and make tokens over POST /tokens.")


def _require_database():
    from flask import current_app

    if current_app.config["MONGODB_URI"] is None:
        raise click.ClickException(EMBEDDED)


@tokens_cli.command("create")
@click.option("--name", required=True, help="Who uses it; recorded in audit fields.")
@click.option("--role", required=True, type=click.Choice(ROLES))
@click.option("--organization", default=None, help="Confine the token to this org id.")
def create_token(name, role, organization):
    """Make a token and print its secret (shown only now)."""
    _require_database()
    try:
        record, secret = get_store().tokens.create(
            {"name": name, "role": role, "organization": organization}, "cli")
    except ServiceError as error:
        raise click.ClickException(error.detail) from None
    click.echo(f"Made token {record['id']} ({name}, {role}"
               f"{', organization ' + organization if organization else ''}).")
    click.echo("Its secret, shown only this once:")
    click.echo(secret)


@tokens_cli.command("list")
def list_tokens():
    """List tokens (never their secrets)."""
    _require_database()
    after = None
    while True:
        page = get_store().tokens.list(PageRequest(100, after=after))
        for t in page.records:
            click.echo(f"{t['id']}  {t['name']}  {t['role']}  {t['organization'] or '-'}  "
                       f"made {t['created_on']}  used {t['last_used_on'] or 'never'}")
        after = page.next_after
        if after is None:
            return


@tokens_cli.command("revoke")
@click.argument("token_id")
def revoke_token(token_id):
    """Revoke a token; the next request with it is refused."""
    _require_database()
    try:
        get_store().tokens.revoke(token_id)
    except ServiceError as error:
        raise click.ClickException(error.detail) from None
    click.echo(f"Revoked {token_id}.")
