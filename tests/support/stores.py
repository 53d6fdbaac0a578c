"""Stores the unit tests make besides the app's, and what they put in them."""

PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}


def mongodb_like_store():
    """A store over a collection that is not the embedded store's: pymongo's
    (and mongomock's, standing in for it) answers any attribute it lacks
    with a sub-collection of that name."""
    import mongomock_ng

    from inventory.resources import store_classes
    from inventory.store import Store

    store = Store(mongomock_ng.MongoClient().db, store_classes())
    store.create_indexes()
    return store


def estate(store, platforms=2, clusters=7, scans=2):
    """An organization with `platforms` platforms of `clusters` clusters of `scans` scans."""
    org = store.organizations.create({"title": "Acme", "description": ""}, "t")
    for p in range(platforms):
        store.platforms.create({"name": f"acme-p{p}", "organization": org["id"], **PLATFORM}, "t")
        for c in range(clusters):
            store.clusters.create({"name": f"acme-p{p}-c{c}", "platform": f"acme-p{p}",
                                   "environment": "dev", "version": "1.30", "labels": {}}, "t")
            for s in range(scans):
                store.scans.create(f"acme-p{p}-c{c}", 100 + s)
    store.tokens.create({"name": "scoped", "role": "reader", "organization": org["id"]}, "t")
    return org


def counts(store):
    return {name: store.db[name].count_documents({})
            for name in ("organizations", "platforms", "clusters", "scans", "tokens")}
