"""Pages as the store reads them: one range on one field, never a skip of
what was seen, the filter and the range in one query, a window bounded at
any scale (inventory/store/pages.py)."""
import pytest

from inventory.store.pages import MAX_EXAMINED, PageRequest
from tests.conftest import FERRETDB
from tests.support.recording import RecordingCollection


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
