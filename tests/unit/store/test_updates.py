"""Changes by merge patch (inventory/store/updates.py)."""
import pytest

from inventory.core.errors import ImmutableField


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
