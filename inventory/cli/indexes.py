"""`flask --app app create-indexes`: the Procfile's release step."""
import click
from flask.cli import with_appcontext

from inventory.store import get_store


@click.command("create-indexes")
@with_appcontext
def create_indexes_command():
    """Create the database's indexes (the Procfile's release step)."""
    get_store().create_indexes()
    click.echo("Indexes created.")
