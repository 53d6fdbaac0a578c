"""The HTTP API: flask-smorest blueprints, one module per resource."""
import flask_smorest

from inventory.api import clusters, meta, organizations, platforms, scans, tokens
from schemas.common import ErrorSchema

BLUEPRINTS = (organizations.blp, platforms.blp, clusters.blp, scans.blp, tokens.blp, meta.blp)


class Api(flask_smorest.Api):
    """flask-smorest's Api, documenting and leaving errors to inventory.errors."""

    ERROR_SCHEMA = ErrorSchema

    def _register_error_handlers(self):
        pass  # inventory.errors handles every error in the interface's format


def init_app(app):
    app.config.update(
        API_TITLE="Cluster Inventory Service",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="docs",
        OPENAPI_SWAGGER_UI_URL="https://cdn.jsdelivr.net/npm/swagger-ui-dist/",
    )
    api = Api(app)
    for blueprint in BLUEPRINTS:
        api.register_blueprint(blueprint)
    app.extensions["inventory.api"] = api
    return api
