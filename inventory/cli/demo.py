"""A small, realistic estate to explore: `flask --app app seed-demo`, or
`INVENTORY_DEMO=1` when starting the server on the embedded store."""
import contextvars
import time

import click
from flask import current_app
from flask.cli import with_appcontext

from inventory.core.errors import KeyInUse
from inventory.store import get_store
from inventory.store.events import acting_as

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
# name, platform, environment, version, labels
CLUSTERS = [
    ("shop-prod", "acme-eks-prod", "production", "v1.31.2-eks-1234", {"team": "shop", "tier": "gold"}),
    ("payments-prod", "acme-eks-prod", "production", "v1.30.6-eks-5678",
     {"team": "payments", "tier": "gold"}),
    ("shop-staging", "acme-eks-prod", "staging", "v1.32.0-eks-0001", {"team": "shop"}),
    ("analytics-prod", "acme-gke-data", "production", "1.29.10-gke.1200", {"team": "data"}),
    ("analytics-dev", "acme-gke-data", "dev", "1.31.1-gke.300", {"team": "data"}),
    ("routing-prod", "globex-aks", "production", "1.30.4", {"team": "routing", "tier": "silver"}),
    ("routing-test", "globex-aks", "test", "1.31.2", {"team": "routing"}),
    ("warehouse-prod", "globex-aks", "production", "1.28.15", {"team": "warehouse"}),
    ("tps-prod", "initech-eks", "production", "v1.29.8-eks-4242", {"team": "tps"}),
    ("tps-dev", "initech-eks", "dev", "v1.31.2-eks-1234", {}),
]
DAY = 24 * 3600


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
    today = int(time.time()) // DAY * DAY
    for index, (name, platform, environment, version, labels) in enumerate(CLUSTERS):
        cluster = store.clusters.create({"name": name, "platform": platform, "title": "",
                                         "description": "", "environment": environment,
                                         "version": version, "labels": labels}, principal)
        for day in range(7, 0, -1):  # a week of nightly scans, a little after 02:00 UTC
            store.scans.create(cluster["name"], today - day * DAY + 2 * 3600 + index * 60)
    return True


@click.command("seed-demo")
@with_appcontext
def seed_demo_command():
    """Load a small demo estate (3 organizations, 4 platforms, 10 clusters, a week of scans)."""
    if current_app.config["MONGODB_URI"] is None:
        raise click.ClickException(
            "MONGODB_URI is not set, so this command would fill its own in-memory store, "
            "which vanishes when it exits. Start the server with INVENTORY_DEMO=1 instead "
            "(scripts/serve does that with INVENTORY_DEMO=1 in its environment).")
    if load_demo(get_store()):
        click.echo("Loaded the demo estate.")
    else:
        click.echo("The demo estate is there already.")
