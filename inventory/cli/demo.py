"""A small, realistic estate to explore: `flask --app app seed-demo`, or
`INVENTORY_DEMO=1` when starting the server on the embedded store."""
import contextvars
import time

import click
from flask import current_app
from flask.cli import with_appcontext

from inventory.core import lifecycle
from inventory.core.errors import KeyInUse
from inventory.store import get_store
from inventory.store.event_documents import acting_as

ORGANIZATIONS = {
    "Acme Corp": "Retail; runs its shop and payments on AWS and its analytics on GCP.",
    "Globex": "Logistics; Azure-first.",
    "Initech": "Software vendor with a small EKS footprint.",
}
# name, organization, title, control plane, cloud
PLATFORMS = [
    ("acme-eks-prod", "Acme Corp", "Acme EKS (eu-west-1)", "eks", "aws"),
    ("acme-gke-data", "Acme Corp", "Acme GKE data platform", "gke", "gcp"),
    ("globex-aks", "Globex", "Globex AKS (West Europe)", "aks", "azure"),
    ("initech-eks", "Initech", "Initech EKS (us-east-1)", "eks", "aws"),
]
# name, platform, environment, the support its version is chosen for, what
# its scans show (PROFILES), labels
CLUSTERS = [
    ("shop-prod", "acme-eks-prod", "production", "supported", "passing",
     {"team": "shop", "tier": "gold"}),
    ("payments-prod", "acme-eks-prod", "production", "ending", "deprecated-api",
     {"team": "payments", "tier": "gold"}),
    ("shop-staging", "acme-eks-prod", "staging", "supported", "newer-patch", {"team": "shop"}),
    ("analytics-prod", "acme-gke-data", "production", "supported", "old-node-pool",
     {"team": "data"}),
    ("analytics-dev", "acme-gke-data", "dev", "ending", "passing", {"team": "data"}),
    ("routing-prod", "globex-aks", "production", "supported", "passing",
     {"team": "routing", "tier": "silver"}),
    ("routing-test", "globex-aks", "test", "ending", "newer-patch", {"team": "routing"}),
    ("warehouse-prod", "globex-aks", "production", "extended", "old-node-pool",
     {"team": "warehouse"}),
    ("tps-prod", "initech-eks", "production", "extended", "deprecated-api", {"team": "tps"}),
    ("tps-dev", "initech-eks", "dev", "supported", "upgraded-unrecorded", {}),
    ("search-prod", "acme-eks-prod", "production", "extended", "passing",
     {"team": "search", "tier": "gold"}),
    ("ledger-prod", "globex-aks", "production", "unsupported", "deprecated-api",
     {"team": "ledger"}),
]
# What a cluster's scans show, and the readiness that makes:
# passing; newer-patch (the API server was patched, the inventory not:
# warning); deprecated-api (clients still call an API removed in the next
# minor, or the one after: error or warning); old-node-pool (a node pool
# the next minor would leave outside the version-skew policy: error);
# upgraded-unrecorded (the API server is a minor ahead of the record: error).
PROFILES = ("passing", "newer-patch", "deprecated-api", "old-node-pool", "upgraded-unrecorded")
# APIs Kubernetes removed (group, version, resource, kind, removed in, its
# replacement), from its deprecation guide; a scan shows only those its
# API server still serves. `componentstatuses` is deprecated, never removed.
REMOVED_APIS = (
    ("batch", "v1beta1", "cronjobs", "CronJob", "1.25", "batch/v1"),
    ("policy", "v1beta1", "podsecuritypolicies", "PodSecurityPolicy", "1.25", ""),
    ("autoscaling", "v2beta2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", "1.26",
     "autoscaling/v2"),
    ("storage.k8s.io", "v1beta1", "csistoragecapacities", "CSIStorageCapacity", "1.27",
     "storage.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io", "v1beta2", "flowschemas", "FlowSchema", "1.29",
     "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas", "FlowSchema", "1.32",
     "flowcontrol.apiserver.k8s.io/v1"),
    ("flowcontrol.apiserver.k8s.io", "v1beta3", "prioritylevelconfigurations",
     "PriorityLevelConfiguration", "1.32", "flowcontrol.apiserver.k8s.io/v1"),
    ("", "v1", "componentstatuses", "ComponentStatus", "", ""),
)
# how each distribution spells a version (minor, patch)
VERSION_FORMATS = {"eks": "v{}.{}-eks-{}", "gke": "{}.{}-gke.{}", "aks": "{}.{}{}"}
BUILDS = {"eks": ("113cf36", "4f3a2b1", "a737599"), "gke": ("1080000", "1255000", "1416000"),
          "aks": ("", "", "")}
PREFERENCE = ("supported", "ending", "extended", "unsupported")
DAY = 24 * 3600


def _minor_key(minor):
    major, number = minor.split(".")
    return int(major), int(number)


def chosen_minor(lifecycles, distribution, wanted, day, rank=0):
    """A minor of `distribution` whose support on `day` is `wanted` (the
    `rank`-th newest such), else the nearest status that the data offers
    that day (the demo follows the calendar: it never shows a version
    whose support is not what it reads today)."""
    cycles = lifecycles.cycles[distribution]
    order = [wanted, *sorted((s for s in PREFERENCE if s != wanted),
                             key=lambda s: abs(PREFERENCE.index(s) - PREFERENCE.index(wanted)))]
    for status in order:
        found = sorted((m for m, c in cycles.items() if c.status(day)[0] == status),
                       key=_minor_key, reverse=True)
        if found:
            return found[min(rank, len(found) - 1)]
    return max(cycles, key=_minor_key)


def _spelled(distribution, minor, patch, build):
    if distribution == "aks":
        return f"{minor}.{patch}"
    return VERSION_FORMATS[distribution].format(minor, patch, build)


def _served(api_removed, minor):
    """Whether an API server at `minor` still serves an API removed in `api_removed`."""
    return not api_removed or _minor_key(api_removed) > _minor_key(minor)


def demo_scan(distribution, minor, patch, profile, c):
    """What the agent posts for demo cluster number `c`, recorded at
    `minor` and `patch` with scans showing `profile`: (the scan's body,
    the version the cluster records)."""
    major, number = _minor_key(minor)
    build = BUILDS[distribution][c % 3]
    recorded = _spelled(distribution, minor, patch, build)
    server_minor, server_patch = minor, patch
    if profile == "newer-patch":
        server_patch = patch + 1
    elif profile == "upgraded-unrecorded":
        server_minor, server_patch = f"{major}.{number + 1}", 1
    server = _spelled(distribution, server_minor, server_patch, build)
    if distribution == "aks":
        server = "v" + server
    kubelet = server if server.startswith("v") else "v" + server
    nodes = {kubelet: 6 + c % 5}
    if c % 2:  # a pool still on the minor before, as upgrades leave them for a while
        nodes[f"v{major}.{number - 1}.{patch + 2}"] = 3
    if profile == "old-node-pool":  # the next minor would be four ahead of it
        nodes[f"v{major}.{number - 3}.{patch}"] = 2
    count = sum(nodes.values())
    target = (major, number + 1)
    apis, findings = [], []
    for i, (group, version, resource, kind, removed, replacement) in enumerate(REMOVED_APIS):
        if not _served(removed, server_minor):
            continue
        soon = removed and _minor_key(removed) <= (target[0], target[1] + 1)
        if soon and profile != "deprecated-api":
            continue  # a cluster that is ready has moved off what the next minors remove
        apis.append({"group": group, "version": version, "resource": resource,
                     "subresource": "", "removed_release": removed,
                     "requests": 40 + (c * 37 + i * 11) % 900})
        if removed and soon:
            findings.append({"source": "pluto", "kind": kind,
                             "api_version": f"{group}/{version}".lstrip("/"),
                             "name": f"{resource[:-1]}-{c}", "namespace": "platform",
                             "removed_in": f"v{removed}.0", "replacement": replacement})
    return {"agent": {"name": "inventory-agent", "version": "1.4.2"},
            "server": {"git_version": server},
            "nodes": {"count": count, "kubelet_versions": nodes,
                      "kube_proxy_versions": {f"{kubelet.split('-')[0]}": count},
                      "container_runtimes": {"containerd://1.7.22": count},
                      "os_images": {"Amazon Linux 2023": count} if distribution == "eks"
                      else {"Container-Optimized OS": count} if distribution == "gke"
                      else {"Ubuntu 22.04.5 LTS": count}},
            "deprecated_api_requests": apis, "findings": findings}, recorded


def load_demo(store, principal="demo"):
    """Load the estate; False, writing nothing, if it is there already (its
    first platform's name is taken). `principal` is its records' author and
    its events' actor alike."""
    return contextvars.copy_context().run(_load, store, principal)


def _load(store, principal):
    acting_as(principal)  # in a context of its own: the caller's actor is left as it was
    if store.platforms.find_doc(PLATFORMS[0][0]) is not None:
        return False
    org_ids = {}
    for title, description in ORGANIZATIONS.items():
        org_ids[title] = store.organizations.create(
            {"title": title, "description": description}, principal)["id"]
    try:
        for name, org, title, control_plane, cloud in PLATFORMS:
            store.platforms.create({"name": name, "organization": org_ids[org], "title": title,
                                    "description": "", "control_plane": {"provider": control_plane},
                                    "infrastructure": {"cloud": {"provider": cloud}}}, principal)
    except KeyInUse:
        for org_id in org_ids.values():  # the demo was loaded before: undo this attempt
            store.organizations.delete(org_id, force=True)
        return False
    now = int(time.time())
    day = lifecycle.today()
    lifecycles = lifecycle.Lifecycles.load()
    providers = {name: control_plane for name, _, _, control_plane, _ in PLATFORMS}
    ranks = {}
    for index, (name, platform, environment, wanted, profile, labels) in enumerate(CLUSTERS):
        distribution = lifecycle.distribution_of(providers[platform])
        rank = ranks[(distribution, wanted)] = ranks.get((distribution, wanted), -1) + 1
        minor = chosen_minor(lifecycles, distribution, wanted, day, rank)
        observed, version = demo_scan(distribution, minor, 3 + index % 7, profile, index)
        cluster = store.clusters.create({"name": name, "platform": platform, "title": "",
                                         "description": "", "environment": environment,
                                         "version": version, "labels": labels}, principal)
        # a week of nightly scans, the newest within the last day; one agent
        # stopped reporting a few days ago (the overview's "not scanned")
        stopped = 4 * DAY if index == len(CLUSTERS) - 1 else 0
        newest = now - stopped - (index * 37 % 600) * 60 - 3600
        for night in range(6, -1, -1):
            store.scans.create_under(cluster["name"], {"scanned_on": newest - night * DAY,
                                                       **observed}, None)
    return True


@click.command("seed-demo")
@with_appcontext
def seed_demo_command():
    """Load a small demo estate (3 organizations, 4 platforms, 12 clusters, a week of an
    agent's scans)."""
    if current_app.config["MONGODB_URI"] is None:
        raise click.ClickException(
            "MONGODB_URI is not set, so this command would fill its own in-memory store, "
            "which vanishes when it exits. Start the server with INVENTORY_DEMO=1 instead "
            "(scripts/serve does that with INVENTORY_DEMO=1 in its environment).")
    if load_demo(get_store()):
        click.echo("Loaded the demo estate.")
    else:
        click.echo("The demo estate is there already.")
