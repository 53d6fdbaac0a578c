"""The fleet console: `/ui/`, server-rendered HTML pages people read the
fleet from, signed in with their token (docs/console.md).

A page is an operation like the API's (`inventory.http.operations`, with
`page=True`): the gate passes it through the same layers, its session
resolving to its token's Principal at the authentication layer
(inventory.http.auth), so roles, organization scope and rate limits are
the API's own; its data comes from the same store calls and list parsing
the API's views make. This package adds only what is particular to pages:
the sign-in and its session, form tokens, templates and their assets, and
the headers that keep a page from running anything but its own files.
"""
import importlib

from inventory.ui import declared, pages, views  # noqa: F401 (the routes, declared at import)
from inventory.ui.pages import blp
from inventory.ui.views import Counts

for _module in declared.modules():  # each resource's pages: inventory/ui/<resource>.py
    importlib.import_module(_module)


def init_app(app):
    """Serve the console; before the API's init_app, whose
    `operations.collect` reads every route's declaration."""
    app.register_blueprint(blp)
    app.extensions["inventory.ui.counts"] = Counts()
