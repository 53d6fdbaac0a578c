"""Routes about the service itself: health, readiness, metrics, JSON Schemas."""
import re

from flask import current_app, jsonify
from flask.views import MethodView

from inventory.core.errors import NotAllowed, NotFound
from inventory.core.spec import PathKey
from inventory.http.auth import current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.observability import METRICS_CONTENT_TYPE, metrics_response
from inventory.http.operations import operation
from inventory.http.schema_urls import base_url, schema_url
from inventory.store import get_store
from schemas.common import HealthSchema, ReadinessSchema, ServiceIndexSchema

# /schemas/{name}: a schema's name, as in a body's `$schema`
SCHEMA_NAME = PathKey("name", "A schema's name, as in a body's `$schema`.", "a schema name",
                      (re.compile(r"^[A-Za-z0-9]{1,64}$"),), 64, "Organization")

blp = Blueprint("meta", __name__, path_keys=(SCHEMA_NAME,),
                description="Health, readiness, metrics and JSON Schemas.")


@blp.route("/")
class ServiceIndex(MethodView):
    @blp.response(200, ServiceIndexSchema)
    @operation("getServiceIndex", role=None)
    def get(self):
        """Where to go from here

        Needs no token: the API's reference (`docs`), the OpenAPI document
        (`openapi.json`), the JSON Schemas, health, readiness, the change feed
        and each collection: every path below the root that a GET answers
        without a parameter, by its name, as an absolute URL."""
        root = base_url().rstrip("/")  # "" when the host is not allowed: relative links
        return {"service": "Cluster Inventory Service",
                "links": {path[1:]: root + path for path in _top_level_paths()}}


def _top_level_paths():
    """Every path one step below the root that a GET answers without a
    parameter (the docs, the document, health, the feed, each collection),
    as the routes declare them: a new resource is listed without a word here."""
    paths = current_app.extensions.get("inventory.http.top_level_paths")
    if paths is None:
        paths = current_app.extensions["inventory.http.top_level_paths"] = sorted(
            rule.rule for rule in current_app.url_map.iter_rules()
            if rule.rule.count("/") == 1 and rule.rule != "/" and not rule.arguments
            and "GET" in rule.methods)
    return paths


@blp.route("/healthz")
class Health(MethodView):
    @blp.response(200, HealthSchema)
    @operation("getHealth", role=None)
    def get(self):
        """The process is alive

        Needs no token; answers whatever the database does."""
        return {"status": "ok"}


@blp.route("/readyz")
class Ready(MethodView):
    @blp.response(200, ReadinessSchema)
    @operation("getReadiness", role=None, errors=(503,))
    def get(self):
        """The database answers

        Needs no token; 503 while the database cannot be reached. On the
        embedded store, `envelope` says how large it is against what it is
        measured for (100,000 clusters, 1,000,000 scans)."""
        store = get_store()
        store.ping()
        envelope = store.envelope()
        return {"status": "ok"} if envelope is None else {"status": "ok", "envelope": envelope}


@blp.route("/metrics")
class Metrics(MethodView):
    @blp.response(200, {"type": "string"}, content_type=METRICS_CONTENT_TYPE,
                  description="Prometheus text exposition format.")
    @operation("getMetrics", role="reader")
    def get(self):
        """Prometheus metrics

        `inventory_requests_total` by method, route and status, and
        `inventory_request_duration_seconds`; label values come from fixed
        sets only. Across workers with PROMETHEUS_MULTIPROC_DIR. For tokens not
        scoped to an organization: the counts are every tenant's."""
        if current_scope() is not None:
            raise NotAllowed("Metrics are for tokens not scoped to an organization: they "
                             "count every organization's requests.")
        return metrics_response()


def _rewrite_refs(node):
    """OpenAPI `#/components/schemas/X` references -> absolute schema URLs."""
    if isinstance(node, dict):
        return {key: (schema_url(value.rsplit("/", 1)[1]) if key == "$ref"
                      else _rewrite_refs(value)) for key, value in node.items()}
    if isinstance(node, list):
        return [_rewrite_refs(item) for item in node]
    return node


@blp.route("/schemas")
class JsonSchemaIndex(MethodView):
    @blp.response(200, {"type": "object", "title": "SchemaIndex", "required": ["schemas"],
                        "properties": {"schemas": {
                            "type": "object", "description": "Each schema's name and URL.",
                            "additionalProperties": {"type": "string", "format": "uri"}}}},
                  description="The JSON Schemas this service serves.")
    @operation("listJsonSchemas", role=None)
    def get(self):
        """The JSON Schemas, by name

        Needs no token: what a body's `$schema` may name, each with its URL."""
        components = current_app.extensions["inventory.http.api"].openapi_document()["components"]
        return jsonify({"schemas": {name: schema_url(name)
                                    for name in sorted(components.get("schemas", {}))}})


@blp.route("/schemas/<name>.json")
class JsonSchema(MethodView):
    @blp.response(200, {"type": "object"}, content_type="application/schema+json",
                  description="A JSON Schema (draft 2020-12).")
    @operation("getJsonSchema", role=None, errors=(404, 422))
    def get(self, name):
        """The JSON Schema named in a body's `$schema`

        Needs no token."""
        components = current_app.extensions["inventory.http.api"].openapi_document()["components"]
        schema = components.get("schemas", {}).get(name)
        if schema is None:
            raise NotFound(f"No schema {name!r}.")
        body = {"$schema": "https://json-schema.org/draft/2020-12/schema",
                "$id": schema_url(name), **_rewrite_refs(schema)}
        response = jsonify(body)
        response.mimetype = "application/schema+json"
        return response
