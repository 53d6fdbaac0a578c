"""The store on its own: its data rules, without HTTP."""
import pytest

from inventory.core.errors import HasChildren, ImmutableField, InvalidReference, KeyInUse, NotFound
from inventory.store.pages import MAX_EXAMINED, PageRequest
from inventory.store.records import DELETING
from tests.conftest import FERRETDB, REAL_MONGO
from tests.support.recording import RecordingCollection

PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}


@pytest.fixture
def tree(store):
    """An organization with one platform, one cluster and one scan."""
    org = store.organizations.create({"title": "Acme", "description": ""}, "tester")
    platform = store.platforms.create({"name": "p1", "organization": org["id"], **PLATFORM}, "tester")
    cluster = store.clusters.create({"name": "c1", "platform": "p1", "environment": "dev",
                                     "version": "1.30.1", "labels": {}}, "tester")
    scan = store.scans.create(cluster["name"], 100)
    return org, platform, cluster, scan


def test_a_page_is_one_range_query_sorted_on_id_reading_limit_plus_one(store):
    for i in range(30):
        store.organizations.create({"title": f"O{i}", "description": ""}, "t")
    recorder = RecordingCollection(store.organizations.collection)
    store.organizations.collection = recorder
    first = store.organizations.list(PageRequest(10))
    second = store.organizations.list(PageRequest(10, after=first.next_after))
    assert len(recorder.finds) == 2
    (query,), options = recorder.finds[1]
    assert options == {"sort": [("_id", 1)], "limit": 11}
    assert query["_id"] == {"$gt": first.next_after}
    assert "skip" not in options
    assert [r["id"] for r in second.records] > [r["id"] for r in first.records]


def test_scan_pages_stay_inside_their_clusters_key_range(store, tree):
    _, _, cluster, _ = tree
    recorder = RecordingCollection(store.scans.collection)
    store.scans.collection = recorder
    store.scans.list_under(cluster["id"], PageRequest(5))
    (query,), options = recorder.finds[0]
    assert query["_id"] == {"$gt": f"{cluster['id']}/", "$lt": f"{cluster['id']}0"}
    assert options == {"sort": [("_id", 1)], "limit": 6}


def test_a_filtered_page_is_the_filter_and_the_range(store, tree):
    from inventory.core import filtering

    recorder = RecordingCollection(store.platforms.collection)
    store.platforms.collection = recorder
    store.platforms.list(PageRequest(5, filtering.parse('name>"a" AND title="x"'), "p0"))
    store.platforms.list(PageRequest(5, filtering.parse('name>"a"'), "p0"))
    # each filtered page: the window's keys, then the filtered range
    (window, keys_only), window_options = recorder.finds[0]
    assert window == {"_id": {"$gt": "p0"}} and keys_only == {"_id": 1}
    assert window_options == {"sort": [("_id", 1)], "skip": MAX_EXAMINED - 1, "limit": 2}
    (combined,), options = recorder.finds[1]
    assert combined["_id"] == {"$gt": "p0"}
    assert combined["$and"] == [{"_id": {"$gt": "a"}}, {"title": {"$eq": "x"}}]
    (clashing,), _ = recorder.finds[3]  # the filter's own `_id` term stays apart
    assert {"_id": {"$gt": "a"}} in clashing["$and"] and {"_id": {"$gt": "p0"}} in clashing["$and"]
    assert options == {"sort": [("_id", 1)], "limit": 6}


def test_page_size_never_reaches_the_database_as_zero(store):
    recorder = RecordingCollection(store.organizations.collection)
    store.organizations.collection = recorder
    store.organizations.list(PageRequest(1))
    assert recorder.finds[0][1]["limit"] == 2


def test_duplicate_slug_raises_duplicate(store, tree):
    org = tree[0]
    with pytest.raises(KeyInUse):
        store.platforms.create({"name": "p1", "organization": org["id"], **PLATFORM}, "t")


def test_cluster_id_index_is_unique(store, tree):
    from pymongo.errors import DuplicateKeyError

    cluster = tree[2]
    with pytest.raises(DuplicateKeyError):
        store.clusters.collection.insert_one({"_id": "other", "id": cluster["id"]})


def test_child_created_under_a_parent_being_deleted_is_undone(store, tree):
    org, platform, _, _ = tree
    store.platforms.mark_deleting({"_id": platform["name"]})
    read = store.db.platforms.find_one({"_id": "p1"})
    with pytest.raises(InvalidReference):
        store.clusters.insert_under({"_id": "late", "id": "k8scl_late", "platform": "p1",
                                     "version": "1.30"},
                                    store.platforms, read, InvalidReference("platform", "gone"))
    assert store.clusters.collection.find_one({"_id": "late"}) is None


def test_scan_posted_after_its_cluster_went_leaves_nothing(store, tree):
    _, _, cluster, _ = tree
    store.clusters.mark_deleting({"_id": cluster["name"]})
    with pytest.raises(NotFound):
        store.scans.create(cluster["name"], 200)
    assert store.scans.collection.count_documents({"scanned_on": 200}) == 0


# -- crash recovery: a repeated DELETE finishes what a dead process began ----


def _estate(store, org_title="Acme"):
    """An organization with two platforms of two clusters of two scans each,
    and a token scoped to it."""
    org = store.organizations.create({"title": org_title, "description": ""}, "t")
    names = []
    for p in range(2):
        platform = store.platforms.create({"name": f"{org_title.lower()}-p{p}",
                                           "organization": org["id"], **PLATFORM}, "t")
        for c in range(2):
            cluster = store.clusters.create({"name": f"{platform['name']}-c{c}",
                                             "platform": platform["name"], "environment": "dev",
                                             "version": "1.30", "labels": {}}, "t")
            names.append(cluster["name"])
            for s in range(2):
                store.scans.create(cluster["name"], 100 + s)
    store.tokens.create({"name": "scoped", "role": "reader", "organization": org["id"]}, "t")
    return org, names


def _left(store):
    return {name: store.db[name].count_documents({})
            for name in ("organizations", "platforms", "clusters", "scans", "tokens")}


def test_a_crashed_organization_delete_is_finished_by_a_repeat(store):
    org, _ = _estate(store)
    # the process died after marking, with the first platform's subtree swept
    store.organizations.mark_deleting({"_id": org["id"]})
    store.platforms.delete_where({"_id": "acme-p0"})
    assert store.organizations.find_doc(org["id"]) is None  # reads as gone meanwhile
    assert _left(store) == {"organizations": 1, "platforms": 1, "clusters": 2, "scans": 4,
                            "tokens": 1}
    store.organizations.delete(org["id"], force=True)
    assert _left(store) == {"organizations": 0, "platforms": 0, "clusters": 0, "scans": 0,
                            "tokens": 0}


def test_a_crashed_platform_delete_is_finished_by_a_repeat(store):
    _estate(store)
    store.platforms.mark_deleting({"_id": "acme-p0"})
    store.clusters.delete_where({"_id": "acme-p0-c0"})  # one cluster of two was swept
    store.clusters.mark_deleting({"_id": "acme-p0-c1"})  # the other marked, not yet swept
    store.platforms.delete("acme-p0", force=True)
    assert store.db.platforms.find_one({"_id": "acme-p0"}) is None
    assert store.db.clusters.count_documents({"platform": "acme-p0"}) == 0
    assert _left(store)["scans"] == 4  # the other platform's, untouched


def test_a_crashed_cluster_delete_is_finished_by_a_repeat(store):
    _, names = _estate(store)
    cluster = store.db.clusters.find_one({"_id": names[0]})
    store.clusters.mark_deleting({"_id": names[0]})
    store.scans.collection.delete_one({"cluster": cluster["id"]})  # one scan of two swept
    store.clusters.delete(cluster["id"])  # by id, as a client may address it
    assert store.db.clusters.find_one({"_id": names[0]}) is None
    assert store.db.scans.count_documents({"cluster": cluster["id"]}) == 0


def test_an_unforced_repeat_of_a_crashed_delete_restores_a_record_with_children(store):
    org, _ = _estate(store)
    store.organizations.mark_deleting({"_id": org["id"]})
    with pytest.raises(HasChildren):
        store.organizations.delete(org["id"])
    assert store.organizations.get(org["id"])["id"] == org["id"]  # visible again, whole
    assert _left(store)["platforms"] == 2


def test_a_repeat_of_a_crashed_delete_of_a_childless_record_needs_no_force(store):
    org = store.organizations.create({"title": "Alone", "description": ""}, "t")
    store.organizations.mark_deleting({"_id": org["id"]})
    store.organizations.delete(org["id"])
    assert store.db.organizations.find_one({"_id": org["id"]}) is None


def test_unforced_delete_with_children_raises_conflict_and_leaves_no_mark(store, tree):
    org = tree[0]
    with pytest.raises(HasChildren):
        store.organizations.delete(org["id"])
    assert DELETING not in store.organizations.collection.find_one({"_id": org["id"]})


def test_update_merges_and_removes_nested_keys(store, tree):
    cluster = tree[2]
    store.clusters.update(cluster["name"], {"labels": {"a": "1", "b": "2"}}, "t")
    updated = store.clusters.update(cluster["id"], {"labels": {"a": None}}, "someone")
    assert updated["labels"] == {"b": "2"} and updated["last_modified_by"] == "someone"


def test_update_of_an_immutable_field_raises_and_writes_nothing(store, tree):
    cluster = tree[2]
    with pytest.raises(ImmutableField):
        store.clusters.update(cluster["name"], {"title": "x", "platform": "p2"}, "t")
    assert "title" not in store.clusters.get(cluster["name"])


def test_stored_fields_starting_with_underscore_never_leave_the_store(store, tree):
    cluster = store.clusters.get("c1")
    assert not [k for k in cluster if k.startswith("_")]
    assert store.db.clusters.find_one({"_id": "c1"})["_version_key"] == "0001.0030.000001"


def test_signing_key_is_made_once_and_kept(store):
    assert store.signing_key() == store.signing_key()


# -- interleavings, made deterministic: another writer acts between a
# create's read of the parent and its own writes -------------------------


def _after_reading(monkeypatch, parent_store, method, meanwhile):
    """Make `parent_store.method` (the create's read of its parent) run
    `meanwhile()` after reading and before the create goes on."""
    real = getattr(parent_store, method)

    def read_then_interleave(*args, **kwargs):
        found = real(*args, **kwargs)
        monkeypatch.setattr(parent_store, method, real)  # once
        meanwhile()
        return found
    monkeypatch.setattr(parent_store, method, read_then_interleave)


def test_a_scan_of_a_cluster_replaced_meanwhile_is_refused_and_leaves_nothing(store, tree,
                                                                              monkeypatch):
    _, _, cluster, _ = tree
    replacement = {}

    def replace():
        store.clusters.delete(cluster["name"])
        replacement.update(store.clusters.create({"name": cluster["name"], "platform": "p1",
                                                  "environment": "dev", "version": "1.30",
                                                  "labels": {}}, "t"))
    _after_reading(monkeypatch, store.clusters, "get_doc", replace)
    with pytest.raises(NotFound):
        store.scans.create(cluster["name"], 999)
    assert store.scans.collection.count_documents({"scanned_on": 999}) == 0
    assert store.clusters.get(cluster["name"])["last_scanned_on"] is None  # the new one's


def test_a_cluster_on_a_platform_replaced_by_another_organization_is_refused(store, tree,
                                                                            monkeypatch):
    org, platform, _, _ = tree
    other = store.organizations.create({"title": "Other", "description": ""}, "t")

    def replace():
        store.platforms.delete(platform["name"], force=True)
        store.platforms.create({"name": platform["name"], "organization": other["id"],
                                **PLATFORM}, "t")
    _after_reading(monkeypatch, store.platforms, "find_doc", replace)
    with pytest.raises(InvalidReference):
        store.clusters.create({"name": "late", "platform": platform["name"],
                               "environment": "dev", "version": "1.30", "labels": {}}, "t",
                              scope=org["id"])
    assert store.db.clusters.find_one({"_id": "late"}) is None
    store.platforms.delete(platform["name"], scope=other["id"])  # nothing of org's below it


def test_a_token_of_an_organization_deleted_meanwhile_is_refused(store, tree, monkeypatch):
    org = tree[0]
    _after_reading(monkeypatch, store.organizations, "find_doc",
                   lambda: store.organizations.delete(org["id"], force=True))
    with pytest.raises(InvalidReference):
        store.tokens.create({"name": "late", "role": "reader", "organization": org["id"]}, "t")
    assert store.tokens.collection.count_documents({"organization": org["id"]}) == 0


@pytest.mark.skipif(FERRETDB, reason="FerretDB 1.24 on SQLite reads a whole collection for "
                    "any filter but `_id` alone, so each create's conditional writes scan "
                    "the organizations: 2,500 creates take many minutes (checked on the "
                    "embedded store and on MongoDB)")
def test_a_filtered_page_examines_at_most_the_bound_at_scale(store):
    from inventory.core import filtering

    ids = [store.organizations.create({"title": "match" if i in (5, 1500) else "other",
                                       "description": ""}, "t")["id"]
           for i in range(int(MAX_EXAMINED * 2.5))]
    tree = filtering.parse('title="match"')
    pages, after, found = [], None, []
    while True:
        page = store.organizations.list(PageRequest(100, tree, after))
        pages.append(len(page.records))
        found += [r["id"] for r in page.records]
        if page.next_after is None:
            break
        assert page.next_after in ids[MAX_EXAMINED - 1::MAX_EXAMINED]  # each window's end
        after = page.next_after
    assert found == [ids[5], ids[1500]] and pages == [1, 1, 0]


def test_records_read_to_be_shown_cannot_change_the_store(store, tree):
    shown = store.platforms.get("p1")
    shown["control_plane"]["provider"] = "changed"
    shown["infrastructure"]["cloud"]["provider"] = "changed"
    listed = store.clusters.list(PageRequest(10)).records[0]
    listed["labels"]["team"] = "changed"
    listed["support"]["status"] = "changed"
    assert store.platforms.get("p1")["control_plane"] == {"provider": "eks"}
    assert store.platforms.get("p1")["infrastructure"] == {"cloud": {"provider": "aws"}}
    assert store.clusters.get("c1")["labels"] == {}
    assert store.clusters.find_doc("c1")["labels"] == {}


class _CountingReads:
    """A collection whose `find_one`s are counted."""

    def __init__(self, collection):
        self._collection, self.reads = collection, 0

    def find_one(self, *args, **kwargs):
        self.reads += 1
        return self._collection.find_one(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._collection, name)


def test_a_tokens_caller_is_read_once_on_the_embedded_store_until_the_tokens_change(store):
    record, secret = store.tokens.create({"name": "ci", "role": "writer"}, "t")
    counting = store.tokens.collection = _CountingReads(store.tokens.collection)
    assert store.tokens.authenticate(secret)["role"] == "writer"  # (its last use recorded)
    reads = counting.reads
    for _ in range(3):
        assert store.tokens.authenticate(secret)["role"] == "writer"
    # (pymongo's collection answers `writes` with a sub-collection)
    embedded = isinstance(getattr(counting._collection, "writes", None), int)
    assert counting.reads - reads == (1 if embedded else 3)  # MongoDB: every time
    # any write to the tokens, by any way, is seen by the next request
    counting.update_one({"_id": record["id"]}, {"$set": {"role": "reader"}})
    assert store.tokens.authenticate(secret)["role"] == "reader"
    store.tokens.revoke(record["id"])
    assert store.tokens.authenticate(secret) is None
    assert store.tokens.authenticate("not" + secret) is None


@pytest.fixture
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


def test_records_are_shown_from_their_own_collection_on_mongodb(mongodb_like_store):
    import pymongo

    from inventory.store.connection import Guarded

    store = mongodb_like_store
    org = store.organizations.create({"title": "Acme", "description": ""}, "t")
    assert store.organizations.get(org["id"])["title"] == "Acme"
    assert [r["id"] for r in store.organizations.list(PageRequest(10)).records] == [org["id"]]
    # as the service reaches MongoDB (no server needed to name the collection read)
    guarded = Guarded(pymongo.MongoClient(connect=False)["db"])
    store.platforms.collection = guarded["platforms"]
    assert store.platforms.shown.unguarded.full_name == "db.platforms"


def test_a_revoked_token_never_authenticates_again_on_mongodb(mongodb_like_store):
    store = mongodb_like_store
    record, secret = store.tokens.create({"name": "ci", "role": "writer"}, "t")
    assert store.tokens.authenticate(secret) is not None  # its last use recorded
    assert store.tokens.authenticate(secret) is not None
    store.tokens.revoke(record["id"])
    assert store.tokens.authenticate(secret) is None


@pytest.mark.slow
def test_no_token_authenticates_once_its_revoke_returned_under_threads(store):
    """The tokens' cache of callers (the embedded store's count of writes)
    against revokes racing it: a request that begins after a revoke
    returned never passes, however the threads interleave."""
    import threading

    late = []
    for round_ in range(15):
        tokens = [store.tokens.create({"name": f"t{round_}-{i}", "role": "reader"}, "t")
                  for i in range(3)]
        for _, secret in tokens:
            store.tokens.authenticate(secret)  # its last use recorded: read from the cache now
        stop, threads = threading.Event(), []

        def hammer(secret, revoked):
            while not stop.is_set():
                began_after = revoked.is_set()
                if store.tokens.authenticate(secret) is not None and began_after:
                    late.append(secret)

        revokes = [threading.Event() for _ in tokens]
        for (_, secret), revoked in zip(tokens, revokes):
            threads += [threading.Thread(target=hammer, args=(secret, revoked)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for (record, _), revoked in zip(tokens, revokes):
            store.tokens.revoke(record["id"])
            revoked.set()
        stop.set()
        for thread in threads:
            thread.join()
        assert all(store.tokens.authenticate(secret) is None for _, secret in tokens)
    assert late == []


def test_a_scans_write_is_decided_without_mongomocks_matcher(store, tree, monkeypatch):
    """Every query of a scan's write (the cluster read, the scan's insert,
    the conditional raise of `last_scanned_on`, the event's slot and the
    outbox cleared by the list read back) is checked by the embedded store
    itself: mongomock's matcher reads every field of the document again."""
    from inventory.embedded import mongomock_internals
    _, _, cluster, _ = tree
    if not hasattr(type(store.scans.collection), "uncopied"):
        pytest.skip("the embedded store's own matcher")

    def refused(*_args):
        raise AssertionError("mongomock's matcher was asked")
    monkeypatch.setattr(mongomock_internals, "filter_applies", refused)
    store.scans.create(cluster["name"], 200)  # raises last_scanned_on
    store.scans.create(cluster["name"], 150)  # older: the cluster is only read again
    assert store.clusters.find_doc("c1")["last_scanned_on"] == 200


@pytest.mark.skipif(not REAL_MONGO, reason="pymongo's collections (MONGODB_URI)")
def test_a_name_a_collection_lacks_is_an_error_not_a_sub_collection(store):
    """pymongo answers any attribute a collection lacks with a sub-collection:
    `shown` once read `<name>.uncopied` there, and every get answered 404."""
    with pytest.raises(AttributeError, match="uncopied"):
        store.clusters.collection.uncopied  # noqa: B018
    assert store.db.settings.name == "settings"  # a database's, by attribute, stay
    assert store.clusters.collection.name == "clusters"
