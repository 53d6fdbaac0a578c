"""The framework floor: a minimal flask-smorest app answering the bench's
routes, under the same gunicorn settings.

Stock `flask_smorest.Api` and `Blueprint` (not the service's subclasses), one
MethodView per route with `@blp.arguments` and `@blp.response` and the
service's own marshmallow schemas, dumping records held in memory: the
service's answers, captured once and parsed from JSON. No auth, no store, no
logging of its own. What the service costs beyond this is its own work, not
the framework's.

    gunicorn -c gunicorn.conf.py 'bench.framework_app:create_app()'

with BENCH_BODIES naming the captured answers ("METHOD path?query" ->
[status, body]), the file the bare baseline serves.
"""
import json
import os
from urllib.parse import parse_qsl, urlsplit

from flask import Flask
from flask.views import MethodView
from flask_smorest import Api, Blueprint

import inventory.http.schema_urls  # noqa: F401 (hands BodySchema its `$schema` URL maker)
from inventory.config import Config
from inventory.http.json_provider import OrjsonProvider
from inventory.resources.clusters.spec import SPEC as CLUSTERS
from inventory.resources.platforms.spec import SPEC as PLATFORMS
from schemas.clusters import (
    FILTER_EXAMPLES,
    KubeClusterListSchema,
    KubeClusterSchema,
)
from schemas.common import list_args
from schemas.platforms import FILTER_EXAMPLES as PLATFORM_FILTER_EXAMPLES
from schemas.platforms import KubePlatformListSchema, KubePlatformSchema
from schemas.scans import KubeClusterScanCreateSchema, KubeClusterScanSchema

# as the service's views make them
KubeClusterListArgsSchema = list_args("KubeClusterList", FILTER_EXAMPLES, CLUSTERS.orderings)
KubePlatformListArgsSchema = list_args("KubePlatformList", PLATFORM_FILTER_EXAMPLES,
                                       PLATFORMS.orderings)


def page_key(path, limit, continue_, filter_, order_by):
    """How a held list page is found: by its path and parsed query arguments."""
    return path, limit, continue_ or None, filter_ or None, order_by or None


def held_records(answers):
    """The captured answers as what the views dump: records by "METHOD
    path", list pages by their query arguments. `$schema` is dropped (the
    schemas make it) and the page's `continue` is held under the schema's
    attribute name (`continue_`)."""
    records, pages = {}, {}
    for key, (_status, body) in answers.items():
        method, target = key.split(" ", 1)
        url, record = urlsplit(target), json.loads(body)
        record.pop("$schema", None)
        if "pagination" in record:
            record["pagination"] = {"continue_": record["pagination"]["continue"]}
            query = dict(parse_qsl(url.query))
            pages[page_key(url.path, int(query["limit"]), query.get("continue"),
                           query.get("filter"), query.get("order_by"))] = record
        else:
            records[f"{method} {url.path}"] = record
    return records, pages


def blueprint(records, pages):
    """The bench's routes, each one MethodView over the held records."""
    blp = Blueprint("bench", __name__)

    @blp.route("/kubeclusters")
    class Clusters(MethodView):
        @blp.arguments(KubeClusterListArgsSchema, location="query")
        @blp.response(200, KubeClusterListSchema)
        def get(self, args):
            return pages[page_key("/kubeclusters", args.get("limit"), args.get("continue_"),
                                  args.get("filter"), args.get("order_by"))]

    @blp.route("/kubeplatforms")
    class Platforms(MethodView):
        @blp.arguments(KubePlatformListArgsSchema, location="query")
        @blp.response(200, KubePlatformListSchema)
        def get(self, args):
            return pages[page_key("/kubeplatforms", args.get("limit"), args.get("continue_"),
                                  args.get("filter"), args.get("order_by"))]

    @blp.route("/kubeclusters/<cluster>")
    class Cluster(MethodView):
        @blp.response(200, KubeClusterSchema)
        def get(self, cluster):
            return records[f"GET /kubeclusters/{cluster}"]

    @blp.route("/kubeplatforms/<platform>")
    class Platform(MethodView):
        @blp.response(200, KubePlatformSchema)
        def get(self, platform):
            return records[f"GET /kubeplatforms/{platform}"]

    @blp.route("/kubeclusters/<cluster>/scans")
    class Scans(MethodView):
        @blp.arguments(KubeClusterScanCreateSchema, required=False)
        @blp.response(201, KubeClusterScanSchema)
        def post(self, _body, cluster):
            return records[f"POST /kubeclusters/{cluster}/scans"]

    return blp


def create_app(answers=None):
    """The app over `answers` (default: the file BENCH_BODIES names)."""
    if answers is None:
        with open(os.environ["BENCH_BODIES"]) as bodies_file:
            answers = json.load(bodies_file)
    app = Flask(__name__)
    # The service's JSON encoder: the ratio then shows the service's own
    # work, not a difference of JSON libraries.
    app.json = OrjsonProvider(app)
    app.config.update(API_TITLE="framework floor", API_VERSION="1", OPENAPI_VERSION="3.1.0",
                      # what `$schema` (inventory.http.schema_urls.schema_url) reads
                      ALLOWED_HOSTS=Config().allowed_hosts)
    Api(app).register_blueprint(blueprint(*held_records(answers)))
    app.add_url_rule("/healthz", "health", lambda: {"status": "ok"})  # for the bench's start
    return app
