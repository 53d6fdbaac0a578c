"""The Cluster Inventory Service: `create_app(config)` and the `app` gunicorn runs."""
import gc
import logging
import os
import sys

from inventory import cli, integrations, resources, store, ui
from inventory.cli import demo
from inventory.config import Config
from inventory.core.errors import Unavailable
from inventory.http import (
    api,
    auth,
    continuation,
    cors,
    errors,
    gate,
    idempotency,
    observability,
    rate_limits,
    request_body,
    request_checks,
    response_headers,
    wsgi_middleware,
)
from inventory.http.application import Application
from inventory.http.json_provider import OrjsonProvider
from inventory.integrations import rollouts, webhooks


def create_app(config=None):
    config = config or Config()
    app = Application(__name__)
    app.json = OrjsonProvider(app)  # keeps the schemas' field order too
    app.config.from_object(config)
    if not config.TESTING and not logging.getLogger().handlers:
        observability.configure_logging()  # gunicorn.conf.py configures it when serving
    wsgi_middleware.init_app(app, config)
    request_checks.init_app(app, config)
    request_body.init_app(app, config)
    errors.init_app(app)
    database = store.init_app(app, config, resources.store_classes())
    continuation.init_app(app, config, database)
    auth.init_app(app, config)
    register_request_hooks(app, config, database)
    ui.init_app(app)  # the console's pages: declared before the API collects every route's
    api.init_app(app, [*resources.blueprints(), *integrations.BLUEPRINTS])
    webhooks.init_app(app, config)
    rollouts.init_app(app, config)
    cli.init_app(app)
    if config.DEMO:
        _load_demo(database)
    return app


def _load_demo(database):
    log = logging.getLogger("inventory")
    try:
        loaded = demo.load_demo(database)
    except Unavailable:  # MongoDB away: the start goes on without it (docs/reliability.md)
        log.warning("INVENTORY_DEMO: the database cannot be reached; the demo estate was not "
                    "loaded (flask --app app seed-demo loads it).")
        return
    if not loaded:
        log.warning("INVENTORY_DEMO: the demo estate is there already; it was not loaded again.")


def register_request_hooks(app, config, database):
    """The request's way through the app: one gate (inventory.http.gate),
    its layers outermost first; the gate's docstring says why this order."""
    cors.init_app(app, config)  # flask-cors' own hook: runs after the gate's way out
    limits = rate_limits.init_app(app, config, database)
    gate.init_app(app, layers=(
        (observability.start_request, observability.finish_request),
        (request_checks.refuse_unservable, response_headers.finish_response),
        (limits.enter, limits.leave),
        (auth.authenticate, None),
        (request_body.read_bounded_body, None),
        (idempotency.reserve_or_replay, idempotency.keep_or_release),
    ), closers=(limits.close,))


def _serving():
    """Whether this process serves requests (gunicorn, `flask run`), rather
    than running a one-off CLI command that should print no start-up notice."""
    program = os.path.basename(sys.argv[0])
    # gunicorn's own program, or `python -m gunicorn` (its arbiter is loaded by then)
    return "gunicorn" in program or "gunicorn.arbiter" in sys.modules or (
        program == "flask" and "run" in sys.argv[1:])


def _keep_the_start():
    """What the start made lives as long as the process: the app's routes,
    schemas and specs, and the embedded store's documents, replayed (which
    the store froze already) or rewritten by a backfill of fields added
    since they were written (`Store.ensure_order_keys`). Out of the cyclic
    collector's reach, a full collection walks only what was made since:
    100,000 backfilled clusters made each one 175 ms of the event loop
    (bench/loop_holds.txt). Its garbage is collected first."""
    gc.collect()
    gc.freeze()


app = create_app(Config(ANNOUNCE=_serving()))
_keep_the_start()
