"""The Cluster Inventory Service: `create_app(config)` and the `app` gunicorn runs."""
import logging
import os
import sys

from flask import Flask

from inventory import api, auth, demo, http, observability, paging, store
from inventory.api import cors, errors, idempotency, limits
from inventory.config import Config
from inventory.jsonprovider import OrjsonProvider


def create_app(config=None):
    config = config or Config()
    app = Flask(__name__)
    app.json = OrjsonProvider(app)  # keeps the schemas' field order too
    app.config.from_object(config)
    if not config.TESTING and not logging.getLogger().handlers:
        observability.configure_logging()  # gunicorn.conf.py configures it when serving
    observability.init_app(app)  # first: every later hook and error has a request id
    http.init_app(app, config)
    cors.init_app(app, config)
    errors.init_app(app)
    database = store.init_app(app, config)
    paging.init_app(app, config, database)
    limits.init_app(app, config, database.db.name)  # before auth: 401s are counted too
    auth.init_app(app, config)
    app.before_request(http.read_body)  # after auth: no body is read for a refused caller
    idempotency.init_app(app)  # after auth: keys belong to the caller
    api.init_app(app)
    demo.init_app(app, config, database)
    return app


def _serving():
    """Whether this process serves requests (gunicorn, `flask run`), rather
    than running a one-off CLI command that should print no start-up notice."""
    program = os.path.basename(sys.argv[0])
    return "gunicorn" in program or (program == "flask" and "run" in sys.argv[1:])


app = create_app(Config(ANNOUNCE=_serving()))
