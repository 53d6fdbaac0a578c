"""The indexes and their passes (inventory/store/indexes.py): at the embedded
store's start the backfill passes run only when the declared orderings or
backfilled fields changed since the last."""
from inventory.store.retention import TTL_REFUSED
from tests.conftest import FERRETDB


def test_the_passes_run_again_only_when_what_they_fill_changed(store, monkeypatch):
    runs = []
    real = type(store.clusters).add_missing_order_keys
    monkeypatch.setattr(type(store.clusters), "add_missing_order_keys",
                        lambda self: runs.append(1) or real(self))
    store.db.settings.delete_one({"_id": "order-keys"})
    store.create_indexes(unless_known=True)
    store.create_indexes(unless_known=True)
    assert runs == [1]  # the second found the marker the first wrote
    marker = store.db.settings.find_one({"_id": "order-keys"})
    assert marker["value"]["clusters"] == [field for _, field in store.clusters.kept_orderings()]
    store.create_indexes()  # the release step: every time
    assert runs == [1, 1]


def test_indexes_the_sweepers_and_the_order_keys_need_exist(store):
    store.create_indexes()
    names = {tuple(index["key"]) for index in store.clusters.collection.index_information()
             .values()}
    assert (("_outbox_since", 1),) in names and (("_deleting", 1),) in names
    assert any(key[0][0].startswith("_order_") for key in names)
    refused = store.db.settings.find_one({"_id": TTL_REFUSED})
    if FERRETDB:  # it refuses TTL indexes: noted, for the sweep
        assert "events" in refused["value"]
    else:
        assert refused is None
