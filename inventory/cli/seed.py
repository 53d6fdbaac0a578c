"""`flask --app app seed --clusters N --scans-per-cluster S [--organizations K]`:
a synthetic estate written into the configured store (the embedded one with
its journal, or MongoDB), in bulk, for benchmarks and for sizing a deployment."""
import time
from datetime import datetime, timezone

import click
from flask.cli import with_appcontext

from inventory.core import readiness
from inventory.core.ids import new_id
from inventory.core.versions import version_key, version_parts
from inventory.embedded.database import embedded_database
from inventory.resources import store_classes
from inventory.resources.scans.store import stored_observations
from inventory.store import Store, get_store
from inventory.store.records import new_revision

BATCH = 10_000  # records per bulk write
PROVIDERS = (("eks", "aws"), ("gke", "gcp"), ("aks", "azure"), ("kubeadm", "aws"))
ENVIRONMENTS = ("production", "staging", "dev")
PENDING = ("_outbox", "_outbox_since")  # a template's outbox: the estate makes no events
AGENT = {"name": "inventory-agent", "version": "1.0.0"}
# Deprecated APIs a fleet still calls (group, version, resource, removed in)
DEPRECATED = (("flowcontrol.apiserver.k8s.io", "v1beta3", "flowschemas", "1.32"),
              ("flowcontrol.apiserver.k8s.io", "v1beta3", "prioritylevelconfigurations", "1.32"),
              ("autoscaling", "v2beta2", "horizontalpodautoscalers", "1.26"),
              ("policy", "v1beta1", "podsecuritypolicies", "1.25"),
              ("storage.k8s.io", "v1beta1", "csistoragecapacities", "1.27"),
              ("", "v1", "componentstatuses", ""))


def typical_scan(version, c):
    """What an agent posts for cluster number `c` at `version` (`1.30.4`,
    the inventory's; the scan may say otherwise): a
    dozen nodes on a few kubelet versions (one in five clusters keeps a
    node three minors back, one in ten misreports its version), a handful
    of deprecated APIs in use, and a few findings."""
    major, minor, patch = version_parts(version)
    observed_minor = minor - 1 if c % 10 == 9 else minor
    current = f"v{major}.{observed_minor}.{patch}-eks-a737599"
    kubelets = {current: 9, f"v{major}.{observed_minor - 1}.8-eks-a737599": 2}
    if c % 5 == 0:
        kubelets[f"v{major}.{observed_minor - 3}.15-eks-a737599"] = 1
    nodes = sum(kubelets.values())
    return {"agent": AGENT, "server": {"git_version": current},
            "nodes": {"count": nodes, "kubelet_versions": kubelets,
                      "kube_proxy_versions": {f"v{major}.{observed_minor}.{patch}-eksbuild.2": nodes},
                      "container_runtimes": {"containerd://1.7.11": nodes},
                      "os_images": {"Amazon Linux 2": nodes - 1, "Bottlerocket OS 1.20.3": 1}},
            "deprecated_api_requests": [
                {"group": group, "version": api_version, "resource": resource, "subresource": "",
                 "removed_release": removed, "requests": 10 + (c * 7 + i * 13) % 500}
                for i, (group, api_version, resource, removed) in enumerate(DEPRECATED)
                if (c + i) % 3 != 0],
            "findings": [
                {"source": "pluto", "kind": "HorizontalPodAutoscaler",
                 "api_version": "autoscaling/v2beta2", "name": f"web-{c % 7}", "namespace": "shop",
                 "removed_in": "v1.26.0", "replacement": "autoscaling/v2"},
                {"source": "pluto", "kind": "CronJob", "api_version": "batch/v1beta1",
                 "name": "report", "namespace": "ops", "removed_in": "v1.25.0",
                 "replacement": "batch/v1"},
                {"source": "kube-no-trouble", "kind": "FlowSchema",
                 "api_version": "flowcontrol.apiserver.k8s.io/v1beta3", "name": "probes",
                 "namespace": "", "removed_in": "v1.32.0",
                 "replacement": "flowcontrol.apiserver.k8s.io/v1"}][:1 + c % 3]}


def templates():
    """One record of each kind as the stores make them, in a scratch store:
    the seed copies their shape, so its records are what the API would write."""
    scratch = Store(embedded_database("seed-templates"), store_classes())  # in memory only
    org = scratch.organizations.create({"title": "t", "description": ""}, "seed")
    scratch.platforms.create({"name": "template", "organization": org["id"], "title": "",
                              "description": "", "control_plane": {"provider": "eks"},
                              "infrastructure": {"cloud": {"provider": "aws"}}}, "seed")
    scratch.clusters.create({"name": "template", "platform": "template", "title": "",
                             "description": "", "environment": "dev", "version": "1.30.0",
                             "labels": {}}, "seed")
    scratch.scans.create("template", 1_700_000_000)
    found = {}
    for name in ("organizations", "platforms", "clusters", "scans"):
        doc = scratch.db[name].find_one({})
        found[name] = {k: v for k, v in doc.items() if k not in PENDING}
    return found


def estate(store, clusters, scans_per_cluster, organizations, run):
    """Yield (collection name, documents) batches of the estate, parents first."""
    template = templates()
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    orgs, platforms = [], []
    for i in range(organizations):
        held = clusters // organizations + (1 if i < clusters % organizations else 0)
        used = {**dict.fromkeys(template["organizations"]["_used"], 0), "platforms": 1,
                "clusters": held}
        orgs.append({**template["organizations"], "_id": new_id("org"),
                     "title": f"Seeded customer {i}", "_rev": new_revision(), "_used": used,
                     # room for what it holds, where that is past the default quota
                     **({"quotas": {"clusters": held}} if held > store.organizations.quotas
                        .defaults["clusters"] else {})})
    for i, org in enumerate(orgs):
        provider, cloud = PROVIDERS[i % len(PROVIDERS)]
        platforms.append({**template["platforms"], "_id": f"{run}-platform-{i:06d}",
                          "organization": org["_id"], "title": f"Seeded platform {i}",
                          "control_plane": {"provider": provider},
                          "infrastructure": {"cloud": {"provider": cloud}},
                          "_uid": new_revision(), "_rev": new_revision()})
    for name, docs, resource in (("organizations", orgs, store.organizations),
                                 ("platforms", platforms, store.platforms)):
        for doc in docs:
            doc.update(resource.order_fields(doc))
        for start in range(0, len(docs), BATCH):
            yield name, docs[start:start + BATCH]
    clusters_batch, scans_batch = [], []
    agent = stored_observations({"agent": AGENT})
    last = 1_700_000_000
    for c in range(clusters):
        platform = platforms[c % organizations]
        version = f"1.{27 + c % 6}.{c % 9}"
        cluster_id = new_id("k8scl")
        scanned = [last + c * 60 + s * 3600 for s in range(scans_per_cluster)]
        doc = {**template["clusters"], "_id": f"{run}-cluster-{c:07d}", "id": cluster_id,
               "platform": platform["_id"], "organization": platform["organization"],
               "environment": ENVIRONMENTS[c % 3], "version": version,
               "_version_key": version_key(version), "labels": {"team": f"team-{c % 20}"},
               "title": f"Seeded cluster {c}", "_rev": new_revision(),
               "last_scanned_on": scanned[-1] if scanned else None,
               **store.clusters.distribution_fields(platform),
               **store.clusters.observed_fields(version, {})}
        # each scan says what made it; the newest also what it observed
        # (the older ones have let theirs go: inventory.core.caps.OBSERVED_SCANS_KEPT)
        typical = typical_scan(version, c) if scanned else {}
        observed = stored_observations(typical)
        for scanned_on in scanned:
            scan_id = new_id("k8scs")
            scan = {**template["scans"], "id": scan_id, "cluster": cluster_id,
                    "_id": store.scans.key(cluster_id, scanned_on, scan_id),
                    "scanned_on": scanned_on, store.scans.TIME_FIELD: now,
                    "_rev": new_revision(), **agent}
            if scanned_on == scanned[-1]:
                scan.update(observed)  # its agent's, and what it observed
                doc.update(store.clusters.observed_fields(
                    version, readiness.merged({}, {**scan, **typical})))
            scans_batch.append(scan)
        doc.update(store.clusters.order_fields(doc))
        clusters_batch.append(doc)
        if len(clusters_batch) >= BATCH or len(scans_batch) >= BATCH:
            yield "clusters", clusters_batch  # a batch's clusters before their scans
            yield "scans", scans_batch
            clusters_batch, scans_batch = [], []
    for name, batch in (("clusters", clusters_batch), ("scans", scans_batch)):
        if batch:
            yield name, batch


@click.command("seed")
@click.option("--clusters", type=click.IntRange(0), required=True, help="Clusters to write.")
@click.option("--scans-per-cluster", type=click.IntRange(0), default=0, show_default=True)
@click.option("--organizations", type=click.IntRange(1), default=None,
              help="Organizations (one platform each); default one per 100 clusters.")
@with_appcontext
def seed_command(clusters, scans_per_cluster, organizations):
    """Write a synthetic estate: K organizations with a platform each, N
    clusters spread over them, S scans per cluster, each cluster's newest
    a typical agent's (nodes, deprecated APIs, findings). No events are
    made: it is an estate to size with, not a history."""
    store = get_store()
    organizations = organizations or max(1, clusters // 100)
    run = f"seed{int(time.time()) % 100000:05d}"
    started, written = time.monotonic(), 0
    for name, batch in estate(store, clusters, scans_per_cluster, organizations, run):
        if not batch:
            continue
        store.db[name].insert_many(batch, ordered=True)
        written += len(batch)
    journal = getattr(store.db, "journal", None)
    if journal is not None:  # one snapshot: the next start reads it, not journal lines
        journal.wait_for_compaction(timeout=600)
        journal.compact()
        journal.wait_for_compaction(timeout=600)
    click.echo(f"Wrote {organizations:,} organizations, {organizations:,} platforms, "
               f"{clusters:,} clusters and {clusters * scans_per_cluster:,} scans in "
               f"{time.monotonic() - started:.1f} s (names start with {run}-).")
