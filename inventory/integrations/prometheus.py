"""Prometheus' HTTP service discovery: `http_sd_configs` with a bearer token."""
import re
from urllib.parse import urlsplit

from flask import current_app
from flask.views import MethodView

from inventory.core.turns import Turns
from inventory.http.blueprint import Blueprint
from inventory.http.operations import operation
from inventory.integrations.clusters import dumped, dumper, every_matching_cluster
from schemas.integrations import PrometheusTargetGroupSchema, PrometheusTargetsArgsSchema

blp = Blueprint("prometheus", __name__, url_prefix="/integrations/prometheus",
                description="Prometheus' HTTP service discovery.")

_LABEL_NAME_RE = re.compile(r"[^a-zA-Z0-9_]")
META = "__meta_inventory_"
_DUMP = dumper(PrometheusTargetGroupSchema())


def target(endpoint):
    """`host:port` of an API server's URL (443 when it names none)."""
    parts = urlsplit(endpoint)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{parts.port or 443}"


def target_group(cluster):
    labels = {f"{META}cluster": cluster["name"], f"{META}cluster_id": cluster["id"],
              f"{META}organization": cluster["organization"],
              f"{META}platform": cluster["platform"],
              f"{META}environment": cluster["environment"],
              f"{META}version": cluster["version"],
              f"{META}support_status": cluster["support"]["status"],
              f"{META}endpoint": cluster["endpoint"]}
    # Prometheus label names are [a-zA-Z_][a-zA-Z0-9_]*: every other character
    # of a key becomes `_`, as Kubernetes' SD does for `__meta_kubernetes_*_label_*`.
    # Two keys may then give one name (`app.kubernetes.io/name`, `app_kubernetes_io/name`):
    # the key first in code point order gives its value, every time.
    for key in sorted(cluster["labels"]):
        labels.setdefault(f"{META}label_{_LABEL_NAME_RE.sub('_', key)}", cluster["labels"][key])
    return {"targets": [target(cluster["endpoint"])], "labels": labels}


@blp.route("/targets")
class Targets(MethodView):
    @blp.arguments(PrometheusTargetsArgsSchema, location="query")
    @blp.response(200, PrometheusTargetGroupSchema(many=True))
    @operation("prometheusTargets", role="reader", errors=(422,))
    def get(self, args):
        """Prometheus HTTP service discovery: one target group per cluster

        The clusters the caller may see that match `filter` and have an
        `endpoint`, as `[{"targets": ["host:port"], "labels": {...}}]` in name
        order, with `__meta_inventory_*` labels (a label key's characters
        outside `[a-zA-Z0-9_]` become `_`). `[]` when nothing matches; any
        failure is an error answer, so that Prometheus keeps its last good list."""
        turns = Turns()
        # only clusters with an endpoint are listed, and so counted against the cap
        clusters = every_matching_cluster(args.get("filter"), "query.filter", turns,
                                          listed=lambda cluster: cluster["endpoint"])
        # dumped here in slices, as PrometheusTargetGroupSchema describes each
        # group: one dump of the whole answer would hold the loop
        return current_app.json.response(dumped(clusters, target_group, _DUMP, turns))
