"""Flask CLI commands (`flask --app app ...`), registered by init_app."""
from inventory.cli import demo, indexes, seed, tokens


def init_app(app):
    for command in (tokens.tokens_cli, demo.seed_demo_command, indexes.create_indexes_command,
                    seed.seed_command):
        app.cli.add_command(command)
