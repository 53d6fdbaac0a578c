"""Records and their stored documents (inventory/store/records.py): the
store's own fields never leave it, and what a reader changes of a record
changes nothing stored."""
from inventory.store.pages import PageRequest


def test_stored_fields_starting_with_underscore_never_leave_the_store(store, tree):
    cluster = store.clusters.get("c1")
    assert not [k for k in cluster if k.startswith("_")]
    assert store.db.clusters.find_one({"_id": "c1"})["_version_key"] == "0001.0030.000001"


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
