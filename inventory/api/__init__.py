"""The HTTP API: flask-smorest blueprints, one module per resource."""
import flask
import flask_smorest

from inventory.api import clusters, meta, openapi, organizations, platforms, scans, tokens
from schemas.common import ErrorSchema

BLUEPRINTS = (organizations.blp, platforms.blp, clusters.blp, scans.blp, tokens.blp, meta.blp)


class Api(flask_smorest.Api):
    """flask-smorest's Api: errors are left to inventory.errors, and the
    document served is the completed one (inventory.api.openapi)."""

    ERROR_SCHEMA = ErrorSchema

    def __init__(self, *args, **kwargs):
        self._document = None
        super().__init__(*args, **kwargs)

    def _register_error_handlers(self):
        pass  # inventory.errors handles every error in the interface's format

    def openapi_document(self):
        """The completed OpenAPI document, built once, on first use."""
        if self._document is None:
            self._document = openapi.complete(self.spec.to_dict())
        return self._document

    def _openapi_json(self):
        return flask.current_app.json.response(self.openapi_document())


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
