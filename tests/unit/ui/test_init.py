"""The console's package (inventory/ui/__init__.py): importing it declares
every resource's pages (each `inventory/ui/<resource>.py` found by
`declared.modules()`); `init_app` registers the console's blueprint and
gives the app its overview's counts."""
import pathlib
import subprocess
import sys

import pytest
from flask import Flask

import inventory.ui
from inventory.ui import declared, pages, views

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.mark.slow  # a fresh interpreter: about two seconds
def test_importing_the_package_alone_declares_every_resources_pages():
    """In a fresh interpreter (in this one, other tests import the page
    modules themselves): the package imports each resource's module, so
    each page is in the menu before the API collects the routes."""
    probe = ("import inventory.ui, sys\n"
             "from inventory.ui import declared, pages\n"
             "print(sorted(set(declared.modules()) - set(sys.modules)))\n"
             "print(sorted(path for _, _, path, _ in pages.MENU))\n")
    ran = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, timeout=60, check=True)
    unimported, menu = ran.stdout.splitlines()
    assert unimported == "[]"
    for path in ("clusters", "platforms", "organizations", "changes"):
        assert f"'/ui/{path}'" in menu


def test_the_modules_declaring_pages_are_the_resources_that_have_one():
    names = {module.rsplit(".", 1)[1] for module in declared.modules()}
    assert {"clusters", "platforms", "organizations", "events", "rollouts", "tokens",
            "webhooks"} <= names
    assert "scans" not in names  # a resource with no page of its own


def test_init_app_registers_the_console_and_its_counts():
    app = Flask(__name__)
    inventory.ui.init_app(app)
    assert app.blueprints["ui"] is pages.blp
    assert isinstance(app.extensions["inventory.ui.counts"], views.Counts)
    rules = {rule.rule for rule in app.url_map.iter_rules()}
    assert {"/ui", "/ui/clusters", "/ui/platforms", "/ui/changes"} <= rules
    # each app its own counts: nothing counted for one is shown by another
    other = Flask(__name__)
    inventory.ui.init_app(other)
    assert other.extensions["inventory.ui.counts"] is not app.extensions["inventory.ui.counts"]
