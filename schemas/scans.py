"""A scan of a cluster, and what it observed (docs/fleet.md, "Upgrade readiness")."""
import time

from marshmallow import Schema, ValidationError, fields, validate

from inventory.core.versions import MAX_VERSION_LENGTH, VERSION_RE
from schemas.common import BodySchema, envelope, request_schema
from schemas.fields import DumpedAsIs, JsonBoolean, Text, WholeNumber

MAX_SCANNED_ON = 253402300799  # 9999-12-31T23:59:59Z
# How far ahead of the service's clock a scan's `scanned_on` may be (422
# past it): an agent's clock may run a little fast, but a scan far in the
# future would stay its cluster's newest, and no real scan after it would
# change what the cluster observed or its readiness.
SCANNED_ON_AHEAD_SECONDS = 5 * 60
# What one scan may carry (422 past it); the body as a whole is bounded by
# MAX_SCAN_BODY_BYTES (inventory.core.caps, 413 past it).
MAX_NODES = 1_000_000  # `nodes.count`, and each map's node counts
MAX_NODE_VALUES = 100  # entries of each of `nodes`' maps (distinct versions, images)
MAX_NODE_VALUE = 256  # characters of a map's key (a version, an OS image)
MAX_DEPRECATED_APIS = 200  # entries of `deprecated_api_requests`
MAX_FINDINGS = 500  # entries of `findings`
MAX_REQUESTS = 2**53 - 1  # an API's request count (a counter since the API server started)
_RELEASE = r"^(v?[0-9]{1,4}\.[0-9]{1,4}(\.[0-9]{1,6})?)?$"  # `1.32`, `v1.25.0`, or ""


class ScanAgentSchema(Schema):
    """What made the scan."""

    name = Text(100, min_length=1, required=True, metadata={
        "description": "The agent's name.", "examples": ["inventory-agent"]})
    version = Text(100, required=True, metadata={
        "description": "The agent's version.", "examples": ["1.4.0"]})


class ScanServerSchema(Schema):
    """The API server, as its `/version` answers."""

    git_version = fields.String(required=True, validate=validate.Regexp(
        VERSION_RE, error="Must be a Kubernetes version such as v1.30.4-eks-a737599."),
        metadata={"description": "`/version`'s `gitVersion`.", "pattern": VERSION_RE.pattern,
                  "maxLength": MAX_VERSION_LENGTH, "examples": ["v1.30.4-eks-a737599"]})


def _node_counts(description, example):
    def at_most(values):
        if len(values) > MAX_NODE_VALUES:
            raise ValidationError(f"At most {MAX_NODE_VALUES} distinct values; "
                                  f"{len(values)} were given.")
    return fields.Dict(
        keys=Text(MAX_NODE_VALUE, min_length=1),
        values=WholeNumber(validate=validate.Range(min=0, max=MAX_NODES)),
        validate=at_most, metadata={
            "description": f"{description}, as the nodes' `status.nodeInfo` reports it, to how "
            f"many nodes report it; at most {MAX_NODE_VALUES} entries.",
            "maxProperties": MAX_NODE_VALUES, "propertyNames": {"maxLength": MAX_NODE_VALUE},
            "examples": [example]})


class ScanNodesSchema(Schema):
    """The nodes: how many, and the versions they run."""

    count = WholeNumber(required=True, validate=validate.Range(min=0, max=MAX_NODES),
                        metadata={"description": "How many nodes the cluster has."})
    kubelet_versions = _node_counts("Each kubelet version",
                                    {"v1.30.4-eks-a737599": 10, "v1.29.8-eks-a737599": 2})
    kube_proxy_versions = _node_counts("Each kube-proxy version (its DaemonSet's image tag "
                                       "where nodes no longer report it)",
                                       {"v1.30.4-eksbuild.2": 12})
    kube_proxy_found = JsonBoolean(allow_none=True, metadata={
        "description": "Whether the scan found kube-proxy running. `false`: it looked (the "
        "kube-system/kube-proxy DaemonSet, kube-proxy's static pods) and none runs, as in a "
        "cluster whose Services are routed by a replacement (Cilium's kube-proxy "
        "replacement, GKE Dataplane V2); `kube_proxy_versions` is then empty and the "
        "`kube-proxy-skew` check reads `passing`. `true`: it runs (an empty "
        "`kube_proxy_versions` then means its version could not be read). Absent or null: "
        "not reported, and `kube_proxy_versions` alone says what was seen.",
        "examples": [False]})
    container_runtimes = _node_counts("Each container runtime", {"containerd://1.7.11": 12})
    os_images = _node_counts("Each OS image", {"Amazon Linux 2": 12})


def _kube_proxy_said_once(nodes):
    """No kube-proxy versions where the scan says none runs."""
    if nodes and nodes.get("kube_proxy_found") is False and nodes.get("kube_proxy_versions"):
        raise ValidationError({"kube_proxy_versions": [
            "Must be empty (or absent) when kube_proxy_found is false: no kube-proxy runs."]})


class DeprecatedApiRequestSchema(Schema):
    """A deprecated API the API server served (its
    `apiserver_requested_deprecated_apis` series), with its requests."""

    group = Text(253, required=True, metadata={
        "description": "The API group; empty for the core group.", "examples": ["policy"]})
    version = Text(63, min_length=1, required=True, metadata={"examples": ["v1beta1"]})
    resource = Text(253, min_length=1, required=True,
                    metadata={"examples": ["podsecuritypolicies"]})
    subresource = Text(253, load_default="", metadata={"description": "Empty (or absent) for the resource "
                                      "itself."})
    removed_release = fields.String(required=True, validate=validate.Regexp(
        _RELEASE, error="Must be a release such as 1.32, or empty when no removal is planned."),
        metadata={"description": "The release that removes it (`1.32`); empty when none is "
                  "planned.", "pattern": _RELEASE, "maxLength": 13, "examples": ["1.25"]})
    requests = WholeNumber(required=True, validate=validate.Range(min=0, max=MAX_REQUESTS),
                           metadata={"description": "Its requests, from "
                                     "`apiserver_request_total`."})


class FindingSchema(Schema):
    """A manifest that uses an API deprecated or removed in a later release,
    as Pluto or kube-no-trouble report it."""

    source = Text(63, load_default="", metadata={"description": "The tool that found it.",
                                "examples": ["pluto"]})
    kind = Text(253, min_length=1, required=True, metadata={"examples": ["PodSecurityPolicy"]})
    api_version = Text(253, min_length=1, required=True,
                       metadata={"examples": ["policy/v1beta1"]})
    name = Text(253, load_default="")
    namespace = Text(63, load_default="")
    removed_in = fields.String(required=True, validate=validate.Regexp(
        _RELEASE, error="Must be a release such as v1.25.0 or 1.25, or empty."),
        metadata={"description": "The release that removes the API; empty when none is "
                  "planned.", "pattern": _RELEASE, "maxLength": 13, "examples": ["v1.25.0"]})
    replacement = Text(253, load_default="", metadata={"examples": ["policy/v1"]})


def _at_most(limit, what):
    def check(values):
        if len(values) > limit:
            raise ValidationError(f"At most {limit} {what}; {len(values)} were given.")
    return check


def _not_far_ahead(scanned_on):
    ahead = scanned_on - int(time.time())
    if ahead > SCANNED_ON_AHEAD_SECONDS:
        raise ValidationError(
            f"{ahead} seconds ahead of the service's clock; at most "
            f"{SCANNED_ON_AHEAD_SECONDS // 60} minutes ahead are taken. Check the clock of "
            "what made the scan.")


class KubeClusterScanSchema(BodySchema):
    """One scan of a cluster."""

    SCHEMA_NAME = "KubeClusterScan"
    id = fields.String(dump_only=True, required=True,
                       metadata={"description": "`k8scs_` + a UUID."})
    cluster = fields.String(dump_only=True, required=True,
                            metadata={"description": "The scanned cluster's `k8scl_` id."})
    scanned_on = WholeNumber(
        required=True, validate=(validate.Range(min=0, max=MAX_SCANNED_ON), _not_far_ahead),
        metadata={"description": "Time of the scan in seconds since the Unix epoch (UTC); "
                  "when recording a scan, now if omitted, and at most "
                  f"{SCANNED_ON_AHEAD_SECONDS // 60} minutes ahead of the service's clock."})
    # What it observed: the store answers it fresh (parsed from the text it
    # stored) and in these shapes, as the body was loaded: dumped as it is.
    agent = fields.Nested(ScanAgentSchema, required=True, allow_none=True, metadata={
        "description": "What made the scan; null when not said."})
    server = DumpedAsIs(ScanServerSchema, required=True, allow_none=True, metadata={
        "description": "The API server's version; null when not observed (or no longer kept: "
        "see `nodes`)."})
    nodes = DumpedAsIs(ScanNodesSchema, required=True, allow_none=True,
                       validate=_kube_proxy_said_once, metadata={
        "description": "The nodes, by version; null when not observed. A cluster's "
        "newest scans keep what they observed (docs/limits.md); older ones keep "
        "`scanned_on` and `agent` only."})
    deprecated_api_requests = fields.List(
        DumpedAsIs(DeprecatedApiRequestSchema), required=True, allow_none=True,
        validate=_at_most(MAX_DEPRECATED_APIS, "deprecated APIs"),
        metadata={"maxItems": MAX_DEPRECATED_APIS, "description": "The deprecated APIs the "
                  "API server served, with their requests; null when not observed."})
    findings = fields.List(
        DumpedAsIs(FindingSchema), required=True, allow_none=True,
        validate=_at_most(MAX_FINDINGS, "findings"),
        metadata={"maxItems": MAX_FINDINGS, "description": "Manifests using APIs deprecated "
                  "or removed in a later release (Pluto, kube-no-trouble); null when not "
                  "observed."})


KubeClusterScanCreateSchema = request_schema(KubeClusterScanSchema, "KubeClusterScanCreate",
                                             example={
    "scanned_on": 1763800000, "agent": {"name": "inventory-agent", "version": "1.0.0"},
    "server": {"git_version": "v1.30.4-eks-a737599"},
    "nodes": {"count": 12, "kubelet_versions": {"v1.30.4-eks-a737599": 10,
                                                "v1.27.16-eks-a737599": 2},
              "kube_proxy_versions": {"v1.30.4-eksbuild.2": 12},
              "container_runtimes": {"containerd://1.7.11": 12},
              "os_images": {"Amazon Linux 2": 12}},
    "deprecated_api_requests": [{"group": "flowcontrol.apiserver.k8s.io",
                                 "version": "v1beta3", "resource": "flowschemas",
                                 "removed_release": "1.32", "requests": 120}],
    "findings": [{"source": "pluto", "kind": "HorizontalPodAutoscaler",
                  "api_version": "autoscaling/v2beta2", "name": "web",
                  "namespace": "shop", "removed_in": "v1.26.0",
                  "replacement": "autoscaling/v2"}]})
KubeClusterScanListSchema = envelope("KubeClusterScanList", KubeClusterScanSchema)
# its list's `filter` examples (the views make its list arguments with its spec's orderings)
FILTER_EXAMPLES = [
    "scanned_on>=1763800000", "scanned_on>=1763800000 AND scanned_on<1764400000"]
