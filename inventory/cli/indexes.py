"""`flask --app app create-indexes`: the Procfile's release step."""
import click
from flask.cli import with_appcontext

from inventory.http.auth import end_other_admin_secrets_sessions
from inventory.store import get_store


@click.command("create-indexes")
@with_appcontext
def create_indexes_command():
    """Create the database's indexes (the Procfile's release step), and end
    the console sessions of a bootstrap admin secret that is no longer
    INVENTORY_ADMIN_TOKEN's."""
    get_store().create_indexes()
    end_other_admin_secrets_sessions(get_store())
    click.echo("Indexes created.")
