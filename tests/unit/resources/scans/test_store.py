"""The scans' store (inventory/resources/scans/store.py): a scan's write is
decided without mongomock's matcher."""
import pytest

from tests.support.stores import PLATFORM


@pytest.fixture
def tree(store):
    """An organization with one platform and one cluster."""
    org = store.organizations.create({"title": "Acme", "description": ""}, "tester")
    store.platforms.create({"name": "p1", "organization": org["id"], **PLATFORM}, "tester")
    cluster = store.clusters.create({"name": "c1", "platform": "p1", "environment": "dev",
                                     "version": "1.30.1", "labels": {}}, "tester")
    return org, None, cluster, None


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
