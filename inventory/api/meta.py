"""Routes about the service itself: health, readiness, JSON Schemas."""
from flask import current_app, jsonify
from flask.views import MethodView

from inventory.api.parser import Blueprint
from inventory.errors import NotFound
from inventory.schema_urls import schema_url
from inventory.store import get_store
from schemas.common import HealthSchema

blp = Blueprint("meta", __name__, description="Health, readiness and JSON Schemas.")


@blp.route("/healthz")
class Health(MethodView):
    @blp.response(200, HealthSchema)
    def get(self):
        """The process is alive"""
        return {"status": "ok"}


@blp.route("/readyz")
class Ready(MethodView):
    @blp.response(200, HealthSchema)
    def get(self):
        """The database answers (else 503)"""
        get_store().ping()
        return {"status": "ok"}


def _rewrite_refs(node):
    """OpenAPI `#/components/schemas/X` references -> absolute schema URLs."""
    if isinstance(node, dict):
        return {key: (schema_url(value.rsplit("/", 1)[1]) if key == "$ref"
                      else _rewrite_refs(value)) for key, value in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


@blp.route("/schemas/<name>.json")
class JsonSchema(MethodView):
    @blp.response(200)
    def get(self, name):
        """The JSON Schema named in a body's `$schema`"""
        components = current_app.extensions["inventory.api"].openapi_document()["components"]
        schema = components.get("schemas", {}).get(name)
        if schema is None:
            raise NotFound(f"No schema {name!r}.")
        body = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": schema_url(name), **_rewrite_refs(schema)}
        response = jsonify(body)
        response.mimetype = "application/schema+json"
        return response
