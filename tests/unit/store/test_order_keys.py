"""Order keys as a store keeps them (inventory/store/order_keys.py): the key
ordering walks `_id`, every other declared ordering a field of its own,
which a write sets only when a field it orders by changed."""
from inventory.store.order_keys import order_key
from inventory.store.pages import PageRequest


def test_each_declared_ordering_walks_one_stored_field(store):
    clusters = store.clusters
    by_name, *others = clusters.orderings.declared
    assert clusters.order_field(None) == "_id" and clusters.order_field(by_name) == "_id"
    kept = dict(clusters.kept_orderings())
    assert set(kept) == set(others) and all(field.startswith("_order_") for field in kept.values())
    version = next(o for o in others if o.text == "version")
    assert kept[version] == "_order_version"
    assert [list(index) for index in clusters.order_indexes()][:2] == [
        [(kept[others[0]], 1)], [("organization", 1), (kept[others[0]], 1)]]


def test_a_write_keeps_the_order_keys_of_what_it_changed(store, tree):
    doc = store.clusters.find_doc("c1")
    fields = store.clusters.order_fields(doc, changed={"environment"})
    assert fields and all("environment" in field for field in fields)
    assert all(doc[field] == value for field, value in fields.items())
    store.clusters.update("c1", {"environment": "production"}, "t")
    moved = store.clusters.find_doc("c1")
    assert all(moved[field] != value for field, value in fields.items())
    page = store.clusters.list(PageRequest(5, ordering=next(
        o for o in store.clusters.orderings.declared if o.text == "environment")))
    assert [r["name"] for r in page.records] == ["c1"]
    parts = [("a", "string", False)]
    assert order_key({"_id": "2", "a": None}, parts) < order_key({"_id": "1", "a": "x"}, parts)
