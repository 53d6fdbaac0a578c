"""The finisher of interrupted deletes (inventory/store/interrupted_deletes.py):
what no process is finishing is finished as it was asked, and a delete
under way is not undone."""
from inventory.store.records import DELETING, FORCED
from tests.support.stores import PLATFORM, counts, estate


def test_the_store_finishes_interrupted_deletes_as_they_were_asked(store):
    forced = estate(store, platforms=2, clusters=4, scans=1)
    kept = store.organizations.create({"title": "Kept", "description": ""}, "t")
    store.platforms.create({"name": "kept-p", "organization": kept["id"], **PLATFORM}, "t")
    # a forced delete that died midway, and an unforced one that died after its mark
    store.organizations.mark_deleting({"_id": forced["id"]}, forced=True)
    store.platforms.mark_deleting({"_id": "acme-p0"}, forced=True)
    store.clusters.delete_where({"_id": {"$in": ["acme-p0-c0", "acme-p0-c1"]}})
    store.clusters.mark_deleting({"_id": "acme-p0-c2"}, forced=True)
    store.organizations.mark_deleting({"_id": kept["id"]})
    # the first look of a process that shares its database only notes them
    marked = store.finish_interrupted_deletes(only=set())
    assert ("organizations", forced["id"]) in marked and ("clusters", "acme-p0-c2") in marked
    assert store.db.clusters.count_documents({}) == 6
    # a later look finishes those still marked
    assert store.finish_interrupted_deletes(only=marked)
    assert store.db.organizations.find_one({"_id": forced["id"]}) is None
    assert store.db.platforms.count_documents({"organization": forced["id"]}) == 0
    assert store.db.clusters.count_documents({}) == 0 and store.db.scans.count_documents({}) == 0
    restored = store.db.organizations.find_one({"_id": kept["id"]})
    assert restored is not None and DELETING not in restored  # it has a platform: undone
    assert store.finish_interrupted_deletes() == set()


def test_a_delete_under_way_is_not_undone_by_the_finisher(store):
    org = estate(store, platforms=1, clusters=2, scans=0)
    store.organizations.mark_deleting({"_id": org["id"]}, forced=True)
    assert store.db.organizations.find_one({"_id": org["id"]})[DELETING] == FORCED
    store.finish_interrupted_deletes()
    assert counts(store)["clusters"] == 0
