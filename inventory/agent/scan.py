"""The scan body, made from what the agent read (no I/O here): the fields
of the contract's "Observations and upgrade readiness" section, less
`findings`, which are Pluto's or kube-no-trouble's to report (they read
manifests; the agent reads the live cluster).
"""
from collections import Counter

from prometheus_client.parser import text_string_to_metric_families

from inventory.agent import NAME, VERSION
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


def scan_body(scanned_on, git_version, node_infos, kube_proxy_daemonset, metrics_lines):
    """The scan to post: what made it, the API server's version, the nodes,
    and the deprecated APIs that were requested."""
    return {
        "scanned_on": scanned_on,
        "agent": {"name": NAME, "version": VERSION},
        "server": {"git_version": git_version},
        "nodes": nodes_part(node_infos, kube_proxy_daemonset),
        "deprecated_api_requests": deprecated_api_requests(metrics_lines),
    }


def nodes_part(node_infos, kube_proxy_daemonset):
    """The count of nodes, and each version map from a value to how many
    nodes report it (a node that reports no value is counted in `count`
    only; past MAX_NODE_VALUES distinct values, the most common are kept)."""
    def tally(values):
        counts = Counter(value for value in values if value and len(value) <= MAX_NODE_VALUE)
        return dict(sorted(counts.most_common(MAX_NODE_VALUES)))
    return {
        "count": len(node_infos),
        "kubelet_versions": tally(info.kubelet_version for info in node_infos),
        "kube_proxy_versions": kube_proxy_versions(kube_proxy_daemonset),
        "container_runtimes": tally(info.container_runtime for info in node_infos),
        "os_images": tally(info.os_image for info in node_infos),
    }


def kube_proxy_versions(daemonset):
    """kube-proxy's version, from where kube-proxy really is: the tag of
    the kube-system/kube-proxy DaemonSet's container image (kubeadm's
    `registry.k8s.io/kube-proxy:v1.31.2`, EKS's `.../eks/kube-proxy:
    v1.31.2-minimal-eksbuild.3`, AKS's), counted on the nodes that run the
    DaemonSet's current template (`status.updatedNumberScheduled`).

    Not `status.nodeInfo.kubeProxyVersion`: the kubelet filled that in with
    its own version, not knowing kube-proxy's or even whether it runs, so it
    was deprecated (KEP-4004, 1.29), and from 1.31 the kubelet leaves it
    empty (the DisableNodeKubeProxyVersion feature gate, on by default).

    `{}` when the cluster has no such DaemonSet (kube-proxy replaced, as by
    Cilium; or run as static pods, as on GKE) or its image names no tag
    (a digest only). During a rollout, the nodes still on the previous
    template are not counted: only their pods know their image, and the
    agent reads no pods (docs/agent.md); the next scan counts them."""
    if not daemonset:
        return {}
    containers = ((((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {})
                  .get("containers") or [])
    named = [c for c in containers if (c or {}).get("name") == KUBE_PROXY_CONTAINER]
    container = (named or containers or [None])[0] or {}
    tag = image_tag(container.get("image") or "")
    nodes = (daemonset.get("status") or {}).get("updatedNumberScheduled") or 0
    return {tag: nodes} if tag and isinstance(nodes, int) and nodes > 0 else {}


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
    exposition's lines, or its whole text."""
    if isinstance(metrics_lines, str):
        metrics_lines = metrics_lines.splitlines()
    wanted = _families(metrics_lines, {REQUESTED_DEPRECATED_APIS, REQUEST_TOTAL})
    removed_in, requests = {}, Counter()
    try:
        for family in text_string_to_metric_families(wanted):
            for sample in family.samples:
                key = tuple(sample.labels.get(label, "") for label in API_LABELS)
                if sample.name == REQUESTED_DEPRECATED_APIS and sample.value > 0:
                    removed_in.setdefault(key, sample.labels.get("removed_release", ""))
                elif sample.name == REQUEST_TOTAL:
                    requests[key] += sample.value
    except ValueError as error:
        raise ClusterError(f"the API server's /metrics could not be parsed: {error}") from None
    kept = sorted(removed_in, key=lambda key: (_release_order(removed_in[key]), key))
    return [{**dict(zip(API_LABELS, key)), "removed_release": removed_in[key],
             "requests": int(requests[key])}
            for key in sorted(kept[:MAX_DEPRECATED_APIS])]


def _release_order(release):
    """`1.25` before `1.32` before "" (no removal planned)."""
    parts = release.lstrip("v").split(".")
    if not release or not all(part.isdigit() for part in parts):
        return (1, ())
    return (0, tuple(int(part) for part in parts))


def _families(lines, names):
    """Only the lines of `names`' families (their HELP, TYPE and samples):
    an API server's /metrics is megabytes of histograms the scan does not
    read, and the parser need not walk them (nor memory hold them)."""
    kept = []
    for line in lines:
        if line.startswith("#"):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ("HELP", "TYPE") and parts[2] in names:
                kept.append(line)
        else:
            name = line.split("{", 1)[0].split(None, 1)
            if name and name[0] in names:
                kept.append(line)
    return "\n".join(kept) + "\n"
