"""Seeding the embedded store with the bench's estate."""
import logging
import time

from inventory.core.ids import new_id
from inventory.core.versions import version_key
from inventory.resources.scans.store import ScanStore
from inventory.store.records import new_revision

COLLECTIONS = ("organizations", "platforms", "clusters", "scans")
PROVIDERS = ("eks", "gke", "aks", "kubeadm")


def seed(store, n):
    """n organizations, n platforms (one each, their control plane providers
    in turn eks, gke, aks and kubeadm), n clusters (one per platform) and n
    scans of the first cluster.

    One record of each is made through the store, so the documents have the
    store's own shape; they are then copied with new keys and written in bulk
    before the indexes exist (record by record, the embedded store's unique
    checks make seeding quadratic: about 20 s at N=1,000, far longer at 10,000).
    """
    principal = "bench"
    org = store.organizations.create({"title": "t", "description": ""}, principal)
    store.platforms.create({"name": "template", "organization": org["id"], "title": "",
                            "description": "", "control_plane": {"provider": "eks"},
                            "infrastructure": {"cloud": {"provider": "aws"}}}, principal)
    cluster = store.clusters.create({"name": "template", "platform": "template", "title": "",
                                     "description": "", "environment": "dev",
                                     "version": "1.30.0", "labels": {}}, principal)
    store.scans.create(cluster["name"], 1_700_000_000)
    template = {name: store.db[name].find_one({}) for name in COLLECTIONS}
    for name in COLLECTIONS:
        store.db[name].drop_indexes()
        store.db[name].delete_many({})

    docs = {name: [] for name in COLLECTIONS}
    for i in range(n):
        org_id, version = new_id("org"), f"1.{28 + i % 5}.{i % 7}"
        provider = PROVIDERS[i % len(PROVIDERS)]
        docs["organizations"].append({**template["organizations"], "_id": org_id,
                                      "title": f"Customer {i}", "_rev": new_revision()})
        docs["platforms"].append({**template["platforms"], "_id": f"platform-{i:05d}",
                                  "organization": org_id, "title": f"Platform {i}",
                                  "control_plane": {"provider": provider},
                                  "_uid": new_revision(), "_rev": new_revision()})
        docs["clusters"].append({**template["clusters"], "_id": f"cluster-{i:05d}",
                                 "id": new_id("k8scl"), "platform": f"platform-{i:05d}",
                                 "organization": org_id,
                                 "environment": ("production", "staging", "dev")[i % 3],
                                 "version": version, "_version_key": version_key(version),
                                 "labels": {"team": f"team-{i % 10}"}, "_rev": new_revision(),
                                 **store.clusters.distribution_fields(docs["platforms"][-1]),
                                 # its readiness (and what is kept of it) for its own version
                                 **store.clusters.observed_fields(version, {})})
    first = docs["clusters"][0]
    for i in range(n):
        scan_id, scanned_on = new_id("k8scs"), 1_700_000_000 + i * 3600
        docs["scans"].append({**template["scans"], "_id": ScanStore.key(first["id"], scanned_on, scan_id),
                              "id": scan_id, "cluster": first["id"], "scanned_on": scanned_on})
    first["last_scanned_on"] = docs["scans"][-1]["scanned_on"]
    for name, resource in (("organizations", store.organizations),
                           ("platforms", store.platforms), ("clusters", store.clusters)):
        for doc in docs[name]:
            doc.update(resource.order_fields(doc))  # as the store's own writes keep them
    for name in COLLECTIONS:
        store.db[name].insert_many(docs[name])
    store.create_indexes()
    _, secret = store.tokens.create({"name": "bench", "role": "writer"}, principal)
    return secret



def seeded_app(n):
    """(app, its store, a test client calling as the admin, seconds the
    seeding took): the service in process on the embedded store, seeded
    with n of everything, logging no line per request."""
    from app import create_app
    from inventory.config import Config

    app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN="bench"))
    logging.getLogger("inventory").setLevel(logging.WARNING)
    store = app.extensions["inventory.store"]
    started = time.monotonic()
    seed(store, n)
    seeded_in = time.monotonic() - started
    client = app.test_client()
    client.environ_base["HTTP_AUTHORIZATION"] = "Bearer bench"
    return app, store, client, seeded_in
