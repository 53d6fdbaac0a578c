"""Upgrade readiness: whether a cluster can take the next minor version
after its recorded one, judged on what its scans observed. Pure functions
of the recorded version and the cluster's observations (`observations`
below); the store keeps their answer on the cluster, so that an index
serves `readiness.status`.

The checks, in the contract's order (docs/design/readiness.md):

1. `observed-version`: the recorded minor against the API server's.
2. `kubelet-skew`, 3. `kube-proxy-skew`: the Kubernetes version-skew policy
   (kubernetes/website, content/en/releases/version-skew-policy.md): a
   kubelet (a kube-proxy) must not be newer than kube-apiserver, and may be
   up to three minor versions older; one older than 1.25 only up to two.
4. `deprecated-apis`: requested APIs and manifests' findings removed in the
   target or earlier (`error`), or in the minor after it (`warning`), as
   managed Kubernetes' upgrade insights grade them.

`observations` is what a cluster keeps of its scans: for each part, the
newest scan that carried it (`{"scanned_on", "scan", "value"}`):
`server` (the `git_version`), `kubelet_versions` and `kube_proxy_versions`
(`[{"value", "count"}]`; `kube_proxy_versions` is `None` when the scan
looked for kube-proxy and found none running: `NO_KUBE_PROXY`),
`deprecated_api_requests` (the scan's list) and
`findings` (`[{"api_version", "kind", "removed_in", "count"}]`: the scan's
findings counted by API and release).
"""
import json

from inventory.core.lifecycle import minor_of
from inventory.core.versions import version_parts

CHECKS = ("observed-version", "kubelet-skew", "kube-proxy-skew", "deprecated-apis")
# worst first: a cluster's status is its worst check's
STATUSES = ("error", "warning", "unknown", "passing")
PARTS = ("server", "kubelet_versions", "kube_proxy_versions", "deprecated_api_requests",
         "findings")
# The policy's window: how many minors older than kube-apiserver a kubelet
# (or kube-proxy) may be, and the narrower one before 1.25.
SKEW_MINORS, OLD_SKEW_MINORS, SKEW_WIDENED_IN = 3, 2, (1, 25)
# The value of the `kube_proxy_versions` part when its scan found no
# kube-proxy running (`nodes.kube_proxy_found: false`): Services routed by a
# replacement (Cilium's, GKE Dataplane V2), so no kube-proxy can be skewed.
# Distinct from a part never reported (unknown) and from one reported empty
# (found, or said by an older agent, with no readable version: unknown).
NO_KUBE_PROXY = None


def _minor(text):
    """(major, minor) of a version, a `1.32` or a `v1.32.0`; None if not one."""
    parts = version_parts(text)
    return None if parts is None else parts[:2]


def _named(minor):
    return f"{minor[0]}.{minor[1]}"


def target_of(version):
    """The next minor after `version` (`1.31.2` -> `1.32`), or None."""
    minor = _minor(version)
    return None if minor is None else f"{minor[0]}.{minor[1] + 1}"


def worst(statuses):
    """The worst of `statuses` (`passing` for none)."""
    return min(statuses, key=STATUSES.index, default="passing")


def _check(check_id, status, summary, details=()):
    return {"id": check_id, "status": status, "summary": summary, "details": list(details)}


def _plural(count, one, many=None):
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


# -- observed-version ---------------------------------------------------------

def _patch_named(text):
    """The patch of a version that names one (`1.31.2`, `v1.31.2-eks-1`), else None."""
    parts = version_parts(text)
    if parts is None or text.lstrip("v").count(".") < 2:
        return None
    return parts[2]


def observed_version(version, observations):
    server = observations.get("server")
    if server is None:
        return _check("observed-version", "unknown", "No scan has reported the API server's "
                      "version yet: run the agent (python -m inventory.agent) in the cluster.")
    observed = server["value"]
    recorded_minor, observed_minor = minor_of(version), minor_of(observed)
    key = {"recorded": recorded_minor, "observed": observed_minor}
    if recorded_minor != observed_minor:
        return _check("observed-version", "error", (
            f"The inventory records {version} but the API server reports {observed}: correct "
            f"the cluster's version (PATCH version) before planning its upgrade; the target "
            f"is worked out from the recorded version."), [{**key, "version": observed}])
    recorded_patch, observed_patch = _patch_named(version), _patch_named(observed)
    if recorded_patch is not None and observed_patch is not None \
            and recorded_patch != observed_patch:
        return _check("observed-version", "warning", (
            f"The inventory records {version} and the API server reports {observed}: same "
            f"minor, another patch; update the recorded version."),
            [{**key, "version": observed}])
    return _check("observed-version", "passing",
                  f"The recorded version matches the API server's {observed}.")


# -- kubelet-skew and kube-proxy-skew ----------------------------------------

def outside_skew(component_minor, server_minor):
    """Whether a kubelet (kube-proxy) at `component_minor` is outside the
    version-skew policy for kube-apiserver at `server_minor` (both
    (major, minor)): newer than it, or older by more than three minors
    (two when the component is older than 1.25)."""
    if component_minor[0] != server_minor[0]:
        return True
    behind = server_minor[1] - component_minor[1]
    window = SKEW_MINORS if component_minor >= SKEW_WIDENED_IN else OLD_SKEW_MINORS
    return behind < 0 or behind > window


def _skew(check_id, component, part, target, observations):
    reported = observations.get(part)
    if reported is None:
        return _check(check_id, "unknown", f"No scan has reported the nodes' {component} "
                      "versions yet: run the agent in the cluster.")
    if reported["value"] is NO_KUBE_PROXY:
        return _check(check_id, "passing", (
            f"No {component} runs in the cluster (scan {reported['scan']} looked and found none: "
            f"its Services are routed by a replacement, such as Cilium's or GKE Dataplane V2), "
            f"so none can fall outside the version-skew policy for {target}."))
    if not reported["value"]:
        return _check(check_id, "unknown", (
            f"Scan {reported['scan']}, the newest to report them, read no {component} version "
            f"(none that a node or image names): the next scan may; a current agent says when "
            f"no {component} runs at all."))
    server = observations.get("server")
    server_minor = _minor(server["value"]) if server is not None else None
    target_minor = _minor(target)
    by_minor, unreadable = {}, 0
    for entry in reported["value"]:
        minor = _minor(entry["value"])
        if minor is None:
            unreadable += entry["count"]
            continue
        if outside_skew(minor, target_minor) or (server_minor is not None
                                                 and minor > server_minor):
            held = by_minor.setdefault(minor, {"minor": _named(minor), "versions": [],
                                               "nodes": 0})
            held["versions"].append(entry["value"])
            held["nodes"] += entry["count"]
    details = [by_minor[minor] for minor in sorted(by_minor)]
    nodes = sum(entry["count"] for entry in reported["value"])
    if details:
        stuck = sum(detail["nodes"] for detail in details)
        listed = ", ".join(f"{d['minor']} on {_plural(d['nodes'], 'node')}" for d in details)
        return _check(check_id, "error", (
            f"{_plural(stuck, 'node')} of {nodes:,} run a {component} that {target} would leave "
            f"outside the version-skew policy ({listed}): upgrade or replace those nodes "
            f"before upgrading the control plane to {target}."), details)
    note = f" ({_plural(unreadable, 'node')} reported no readable version)" if unreadable else ""
    return _check(check_id, "passing", f"Every {component} ({_plural(nodes, 'node')}) is "
                  f"within the version-skew policy for {target}{note}.")


# -- deprecated-apis ----------------------------------------------------------

def _grade(removed, target_minor):
    """`error` when removed in the target or earlier, `warning` in the minor
    after it, else None."""
    minor = _minor(removed) if removed else None
    if minor is None:
        return None
    if minor <= target_minor:
        return "error"
    if minor == (target_minor[0], target_minor[1] + 1):
        return "warning"
    return None


def deprecated_apis(target, observations):
    requested, findings = (observations.get("deprecated_api_requests"),
                           observations.get("findings"))
    if requested is None and findings is None:
        return _check("deprecated-apis", "unknown", "No scan has reported the deprecated APIs "
                      "in use yet: run the agent, or post Pluto's or kube-no-trouble's findings.")
    target_minor = _minor(target)
    apis = {}  # key -> detail; subresources of one API add up
    for api in (requested or {}).get("value", ()):
        status = _grade(api["removed_release"], target_minor)
        if status is None:
            continue
        key = (api["group"], api["version"], api["resource"], api["removed_release"])
        detail = apis.setdefault(key, {"status": status, "group": api["group"],
                                       "version": api["version"], "resource": api["resource"],
                                       "removed_release": api["removed_release"],
                                       "requests": 0})
        detail["requests"] += api["requests"]
    found = {}
    for finding in (findings or {}).get("value", ()):
        status = _grade(finding["removed_in"], target_minor)
        if status is None:
            continue
        key = (finding["api_version"], finding["kind"], finding["removed_in"])
        detail = found.setdefault(key, {"status": status, "api_version": finding["api_version"],
                                        "kind": finding["kind"],
                                        "removed_in": finding["removed_in"], "findings": 0})
        detail["findings"] += finding["count"]
    # errors first; requested APIs before findings; most used first
    details = sorted([*apis.values(), *found.values()], key=lambda d: (
        STATUSES.index(d["status"]), "resource" not in d, -d.get("requests", d.get("findings")),
        _api_named(d)))
    status = worst(detail["status"] for detail in details)
    if status == "passing":
        return _check("deprecated-apis", "passing", f"No API in use (as scanned) is removed in "
                      f"{target} or the minor after it.")
    failing = [d for d in details if d["status"] == status]
    named = ", ".join(_api_named(d) for d in failing[:3]) + (", ..." if len(failing) > 3 else "")
    if status == "error":
        summary = (f"{_plural(len(failing), 'API')} in use {'is' if len(failing) == 1 else 'are'}"
                   f" removed in {target} or earlier ({named}): move their clients and "
                   f"manifests to the replacement APIs before upgrading.")
    else:
        summary = (f"{_plural(len(failing), 'API')} in use {'is' if len(failing) == 1 else 'are'}"
                   f" removed in the minor after {target} ({named}): plan their migration "
                   f"before the next upgrade.")
    return _check("deprecated-apis", status, summary, details)


def _api_named(detail):
    if "resource" in detail:
        group = f"{detail['group']}/" if detail["group"] else ""
        return (f"{group}{detail['version']} {detail['resource']}, removed in "
                f"{detail['removed_release']}: {_plural(detail['requests'], 'request')}")
    return (f"{detail['api_version']} {detail['kind']}, removed in {detail['removed_in']}: "
            f"{_plural(detail['findings'], 'finding')}")


# -- the whole ---------------------------------------------------------------

def assess(version, observations):
    """The readiness of a cluster at `version` with `observations` for an
    upgrade to the next minor: `{"target", "status", "checks"}`."""
    observations = observations or {}
    target = target_of(version)
    checks = [observed_version(version, observations),
              _skew("kubelet-skew", "kubelet", "kubelet_versions", target, observations),
              _skew("kube-proxy-skew", "kube-proxy", "kube_proxy_versions", target, observations),
              deprecated_apis(target, observations)]
    return {"target": target, "status": worst(check["status"] for check in checks),
            "checks": checks}


def blocker_keys(readiness):
    """One string per failing check and key (what `:blockers` counts
    clusters by), sorted: JSON of `[check, status, key]`."""
    keys = set()
    for check in readiness["checks"]:
        if check["status"] not in ("error", "warning"):
            continue
        for detail in check["details"]:
            keys.add(json.dumps([check["id"], detail.get("status", check["status"]),
                                 _blocker_key(check["id"], detail)], separators=(",", ":")))
    return sorted(keys)


def _blocker_key(check_id, detail):
    if check_id == "observed-version":
        return {"recorded": detail["recorded"], "observed": detail["observed"]}
    if check_id in ("kubelet-skew", "kube-proxy-skew"):
        return {"minor": detail["minor"]}
    if "resource" in detail:
        return {field: detail[field] for field in ("group", "version", "resource",
                                                   "removed_release")}
    return {field: detail[field] for field in ("api_version", "kind", "removed_in")}


def blocker_of(text):
    """(check, status, key) of a string `blocker_keys` made."""
    check, status, key = json.loads(text)
    return check, status, key


def observed_of(observations):
    """The cluster's `observed` object (from its newest scan that carried
    `server`), or None."""
    server = (observations or {}).get("server")
    if server is None:
        return None
    return {"version": server["value"], "minor": minor_of(server["value"]),
            "scanned_on": server["scanned_on"], "scan": server["scan"]}


def same_values(observations, others):
    """Whether two observations hold the same values, whichever scans
    observed them: readiness is worked out of the values alone (and the
    recorded version), so it is the same for both."""
    if observations.keys() != others.keys():
        return False
    return all(part["value"] == others[name]["value"] for name, part in observations.items())


def merged(observations, scan):
    """The cluster's observations after the scan `scan` (its `scanned_on`,
    `id`, and the parts it carries, as its body has them): each part it carries
    replaces the kept one when the scan is newer (by `scanned_on`, then by
    id: ids of scans are UUIDv7s, in the order they were recorded). The same
    object when nothing changed."""
    observations = observations or {}
    newer = {}
    order = (scan["scanned_on"], scan["id"])
    for part, value in _parts_of(scan).items():
        kept = observations.get(part)
        if kept is None or (kept["scanned_on"], kept["scan"]) < order:
            newer[part] = {"scanned_on": scan["scanned_on"], "scan": scan["id"], "value": value}
    return {**observations, **newer} if newer else observations


def _parts_of(scan):
    """The parts a scan carries (as its body gives them), in the observations' form."""
    parts = {}
    if scan.get("server") is not None:
        parts["server"] = scan["server"]["git_version"]
    nodes = scan.get("nodes")
    if nodes is not None:
        for part in ("kubelet_versions", "kube_proxy_versions"):
            if nodes.get(part) is not None:  # a map of value -> nodes, kept as pairs
                parts[part] = [{"value": value, "count": count}
                               for value, count in sorted(nodes[part].items())]
        if nodes.get("kube_proxy_found") is False:  # looked, and none runs
            parts["kube_proxy_versions"] = NO_KUBE_PROXY
    if scan.get("deprecated_api_requests") is not None:
        parts["deprecated_api_requests"] = scan["deprecated_api_requests"]
    if scan.get("findings") is not None:
        counted = {}
        for finding in scan["findings"]:
            key = (finding["api_version"], finding["kind"], finding["removed_in"])
            counted[key] = counted.get(key, 0) + 1
        parts["findings"] = [{"api_version": a, "kind": k, "removed_in": r, "count": n}
                             for (a, k, r), n in sorted(counted.items())]
    return parts
