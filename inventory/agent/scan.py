"""The scan body, made from what the agent read (no I/O here): the fields
of the contract's "Observations and upgrade readiness" section, less
`findings`, which are Pluto's or kube-no-trouble's to report (they read
manifests; the agent reads the live cluster).
"""
import math
import re
from collections import Counter

from prometheus_client.parser import text_string_to_metric_families

from inventory.agent import NAME, VERSION, bounds
from inventory.agent.failures import ClusterError

# The two metric families read out of the API server's /metrics, and the
# labels that name an API in both.
REQUESTED_DEPRECATED_APIS = "apiserver_requested_deprecated_apis"
REQUEST_TOTAL = "apiserver_request_total"
API_LABELS = ("group", "version", "resource", "subresource")
KUBE_PROXY_CONTAINER = "kube-proxy"
# What the inventory accepts of one scan (schemas/scans.py there; a scan
# past them is refused whole, so the agent keeps within them):
MAX_NODE_VALUES = 100  # entries of each of `nodes`' maps: the most common are kept
MAX_NODE_VALUE = 256  # characters of a map's key: a longer value is counted in `count` only
MAX_DEPRECATED_APIS = 200  # entries of `deprecated_api_requests`: those removed soonest are kept
MAX_REQUESTS = 2**53 - 1  # an API's request count
RELEASE = re.compile(r"^(v?[0-9]{1,4}\.[0-9]{1,4}(\.[0-9]{1,6})?)?$")  # `1.32`, `v1.25.0`, ""
API_LABEL_LENGTHS = {"group": 253, "version": 63, "resource": 253, "subresource": 253}
METRICS_BATCH = 1 << 20  # characters of kept lines parsed at a time


def scan_body(scanned_on, git_version, nodes, kube_proxy, requested):
    """The scan to post: what made it, the API server's version, the nodes
    (a `NodeTally`) and kube-proxy (`(found, versions)`), and the deprecated
    APIs that were requested (`deprecated_api_requests`' list)."""
    return {
        "scanned_on": scanned_on,
        "agent": {"name": NAME, "version": VERSION},
        "server": {"git_version": git_version},
        "nodes": nodes_part(nodes, kube_proxy),
        "deprecated_api_requests": requested,
    }


class NodeTally:
    """The nodes counted as they are listed: how many, and how many report
    each value of the three fields the scan keeps (a value over
    MAX_NODE_VALUE characters, or past MAX_DISTINCT_VALUES distinct ones, is
    counted in `count` only: the scan keeps the 100 most common anyway)."""

    FIELDS = ("kubelet_versions", "container_runtimes", "os_images")

    def __init__(self, infos=()):
        self.count = 0
        self.values = {name: Counter() for name in self.FIELDS}
        for info in infos:
            self.add(*info)

    def add(self, kubelet_version, container_runtime, os_image):
        self.count += 1
        for name, value in zip(self.FIELDS, (kubelet_version, container_runtime, os_image)):
            counts = self.values[name]
            if value and len(value) <= MAX_NODE_VALUE and (
                    value in counts or len(counts) < bounds.MAX_DISTINCT_VALUES):
                counts[value] += 1


def nodes_part(nodes, kube_proxy):
    """The count of nodes, and each version map from a value to how many
    nodes report it (past MAX_NODE_VALUES distinct values, the most common
    are kept). `kube_proxy_found: false` when none runs (said only then:
    an inventory that predates the field takes every other scan as before)."""
    def kept(counts):
        return dict(sorted(counts.most_common(MAX_NODE_VALUES)))
    if not isinstance(nodes, NodeTally):
        nodes = NodeTally(nodes)
    found, versions = kube_proxy if isinstance(kube_proxy, tuple) else (True, kube_proxy)
    part = {
        "count": nodes.count,
        "kubelet_versions": kept(nodes.values["kubelet_versions"]),
        "kube_proxy_versions": kept(Counter(versions)) if found else {},
        "container_runtimes": kept(nodes.values["container_runtimes"]),
        "os_images": kept(nodes.values["os_images"]),
    }
    if not found:
        part["kube_proxy_found"] = False
    return part


def kube_proxy_versions(daemonset):
    """kube-proxy's versions from the kube-system/kube-proxy DaemonSet as
    the API server answers it (see `kube_proxy_of_daemonset`); `{}` for none."""
    if not daemonset:
        return {}
    template = (((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {})
    status = daemonset.get("status") or {}
    return kube_proxy_of_daemonset({
        "containers": [c for c in template.get("containers") or [] if isinstance(c, dict)],
        "updatedNumberScheduled": status.get("updatedNumberScheduled"),
        "desiredNumberScheduled": status.get("desiredNumberScheduled")}) or {}


def kube_proxy_of_daemonset(daemonset):
    """kube-proxy's version, from where kube-proxy really is: the tag of
    the kube-system/kube-proxy DaemonSet's container image (kubeadm's
    `registry.k8s.io/kube-proxy:v1.31.2`, EKS's `.../eks/kube-proxy:
    v1.31.2-minimal-eksbuild.3`, AKS's), counted on the nodes that run the
    DaemonSet's current template (`updatedNumberScheduled`). `daemonset`:
    its `containers` (`name`, `image`) and those counts, checked.

    Not `status.nodeInfo.kubeProxyVersion`: the kubelet filled that in with
    its own version, not knowing kube-proxy's or even whether it runs, so it
    was deprecated (KEP-4004, 1.29), and from 1.31 the kubelet leaves it
    empty (the DisableNodeKubeProxyVersion feature gate, on by default).

    None when the DaemonSet is scheduled on no node (`desiredNumberScheduled`
    0: kube-proxy turned off by a node selector, as when Cilium replaces
    it): then its static pods are looked for. `{}` when it runs but its
    image names no tag (a digest only), or no node runs its current
    template yet (during a rollout, the nodes still on the previous template
    are not counted: the next scan counts them)."""
    if daemonset.get("desiredNumberScheduled") == 0:
        return None
    tag = image_tag(_kube_proxy_container(daemonset["containers"]).get("image") or "")
    nodes = daemonset.get("updatedNumberScheduled") or 0
    return {tag: nodes} if tag and nodes > 0 else {}


def kube_proxy_of_pods(pods):
    """`(found, versions)` from kube-proxy's static pods (labelled
    `component=kube-proxy` in kube-system, one a node, as GKE and RKE2 run
    it): each pod that has not ended counts its image's tag once. No such
    pod: kube-proxy runs nowhere, `(False, {})`."""
    running = [pod for pod in pods if pod["phase"] not in ("Succeeded", "Failed")]
    if not running:
        return False, {}
    tags = Counter(image_tag(_kube_proxy_container(pod["containers"]).get("image") or "")
                   for pod in running)
    tags.pop("", None)
    return True, dict(tags)


def _kube_proxy_container(containers):
    named = [c for c in containers if c.get("name") == KUBE_PROXY_CONTAINER]
    return (named or containers or [{}])[0]


def image_tag(image):
    """`v1.31.2` of `registry.k8s.io/kube-proxy:v1.31.2@sha256:...`; "" when
    the reference names no tag (a registry's port is not a tag)."""
    name = image.split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.split(":", 1)[1] if ":" in last else ""


def deprecated_api_requests(metrics_lines):
    """Each deprecated API that was requested (`apiserver_requested_deprecated_apis`),
    with `requests`: the sum of `apiserver_request_total` over every verb,
    code and scope of the same group, version, resource and subresource.
    Both are the answering API server's counts since it started (with
    several API servers, /metrics is one of them's). `metrics_lines`: the
    exposition's lines (read as they come, parsed a batch at a time), or its
    whole text. A value that is not a count (NaN, negative, past
    MAX_REQUESTS) or a label past the inventory's bounds is a ClusterError."""
    if isinstance(metrics_lines, str):
        metrics_lines = metrics_lines.splitlines()
    removed_in, requests = {}, Counter()
    for batch in _batches(metrics_lines, {REQUESTED_DEPRECATED_APIS, REQUEST_TOTAL}):
        try:
            samples = [sample for family in text_string_to_metric_families(batch)
                       for sample in family.samples]
        except ValueError as error:
            raise ClusterError("the API server's /metrics could not be parsed: "
                               f"{str(error)[:200]}") from None
        for sample in samples:
            key = _api_key(sample)
            value = sample.value
            if not (isinstance(value, (int, float)) and math.isfinite(value)
                    and 0 <= value <= MAX_REQUESTS):
                raise ClusterError(f"the API server's /metrics: {sample.name} of "
                                   f"{'/'.join(filter(None, key[:3]))} is {value!r}, not a count")
            if sample.name == REQUESTED_DEPRECATED_APIS and value > 0:
                release = sample.labels.get("removed_release", "")
                if not RELEASE.match(release):
                    raise ClusterError(f"the API server's /metrics: {REQUESTED_DEPRECATED_APIS} "
                                       "has a removed_release that is not a release")
                removed_in.setdefault(key, release)
            elif sample.name == REQUEST_TOTAL:
                if key not in requests and len(requests) >= bounds.MAX_METRICS_APIS:
                    raise ClusterError(f"the API server's /metrics counts requests of more than "
                                       f"{bounds.MAX_METRICS_APIS:,} APIs")
                requests[key] = min(requests[key] + value, MAX_REQUESTS)
    kept = sorted(removed_in, key=lambda key: (_release_order(removed_in[key]), key))
    return [{**dict(zip(API_LABELS, key)), "removed_release": removed_in[key],
             "requests": int(requests[key])}
            for key in sorted(kept[:MAX_DEPRECATED_APIS])]


def _api_key(sample):
    key = tuple(sample.labels.get(label, "") for label in API_LABELS)
    for label, value in zip(API_LABELS, key):
        if len(value) > API_LABEL_LENGTHS[label]:
            raise ClusterError(f"the API server's /metrics: a {sample.name} label {label} is "
                               f"longer than {API_LABEL_LENGTHS[label]} characters")
    return key


def _release_order(release):
    """`1.25` before `1.32` before "" (no removal planned)."""
    parts = release.lstrip("v").split(".")
    if not release or not all(part.isdigit() for part in parts):
        return (1, ())
    return (0, tuple(int(part) for part in parts))


def _batches(lines, names):
    """The samples of `names`' families, as texts of at most about
    METRICS_BATCH characters: an API server's /metrics is megabytes of
    histograms the scan does not read, and neither the parser nor memory
    need hold them. Comments (HELP, TYPE) are left out: a sample's name is
    the same without them."""
    batch, size = [], 0
    for line in lines:
        if line.startswith("#"):
            continue
        name = line.split("{", 1)[0].split(None, 1)
        if name and name[0] in names:
            batch.append(line)
            size += len(line) + 1
            if size >= METRICS_BATCH:
                yield "\n".join(batch) + "\n"
                batch, size = [], 0
    if batch:
        yield "\n".join(batch) + "\n"
