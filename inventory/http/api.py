"""The API: flask-smorest's Api with the resources' blueprints and the meta
routes, its OpenAPI document completed from the operations' declarations."""
import os

import flask
import flask_smorest
import flask_swagger_ui

from inventory.http import meta, openapi, operations
from schemas.common import ErrorSchema


class Api(flask_smorest.Api):
    """flask-smorest's Api: errors are left to inventory.core.errors, and the
    document served is the completed one (inventory.http.openapi)."""

    ERROR_SCHEMA = ErrorSchema

    def __init__(self, *args, **kwargs):
        self._document = None
        super().__init__(*args, **kwargs)

    def _register_error_handlers(self):
        pass  # inventory.core.errors handles every error in the interface's format

    def openapi_document(self):
        """The completed OpenAPI document, built once, on first use."""
        if self._document is None:
            declared = flask.current_app.extensions["inventory.http.operations"]
            self._document = openapi.complete(self.spec.to_dict(), declared.values(),
                                              flask.current_app.config["INVENTORY_CORS"])
        return self._document

    def _openapi_json(self):
        return flask.current_app.json.response(self.openapi_document())


def _property_names(self, field, **_kwargs):
    """JSON Schema's `propertyNames` from a field's metadata (labels' key
    rule), which apispec does not pass through by itself."""
    names = field.metadata.get("propertyNames")
    return {"propertyNames": names} if names else {}


SWAGGER_UI_DIST = os.path.join(os.path.dirname(flask_swagger_ui.__file__), "dist")
docs_assets = flask.Blueprint("docs-assets", __name__, static_folder=SWAGGER_UI_DIST,
                              static_url_path="/docs/assets")


def init_app(app, blueprints):
    """Serve `blueprints` (the resources', inventory.resources) and the meta routes."""
    app.config.update(
        API_TITLE="Cluster Inventory Service",
        API_VERSION="1.0.0",
        OPENAPI_VERSION="3.1.0",
        OPENAPI_URL_PREFIX="/",
        OPENAPI_JSON_PATH="openapi.json",
        OPENAPI_SWAGGER_UI_PATH="docs",
        # Swagger UI's files come from a package and are served from here, so
        # the docs work where no CDN can be reached.
        OPENAPI_SWAGGER_UI_URL="/docs/assets/",
        OPENAPI_SWAGGER_UI_CONFIG={"persistAuthorization": True, "tryItOutEnabled": False},
    )
    app.register_blueprint(docs_assets)
    api = Api(app)
    api.ma_plugin.converter.add_attribute_function(_property_names)
    for blueprint in (*blueprints, meta.blp):
        api.register_blueprint(blueprint)
    app.extensions["inventory.http.api"] = api
    app.extensions["inventory.http.operations"] = operations.collect(app)
    return api
