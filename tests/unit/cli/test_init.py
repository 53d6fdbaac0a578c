"""The commands registered on the app (inventory/cli/__init__.py)."""


def test_every_command_is_registered(app):
    assert {"tokens", "seed-demo", "create-indexes", "seed"} <= set(app.cli.commands)
    assert set(app.cli.commands["tokens"].commands) == {"create", "list", "revoke"}
