"""The Cluster Inventory Service: `create_app(config)` and the `app` gunicorn runs."""
import logging

from flask import Flask

from inventory import api, errors, http, paging, store
from inventory.config import Config

log = logging.getLogger("inventory")


def create_app(config=None):
    config = config or Config()
    app = Flask(__name__)
    app.config.from_object(config)
    app.json.sort_keys = False  # keep the schemas' field order
    http.init_app(app, config)
    errors.init_app(app)
    database = store.init_app(app, config)
    paging.init_app(app, config, database)
    api.init_app(app)
    if config.embedded and not config.TESTING:
        log.warning("No MONGODB_URI: using the embedded in-memory store. "
                    "All data lives in this process's memory and is lost when it stops.")
    return app


app = create_app()
