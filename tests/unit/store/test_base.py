"""ResourceStore put together (inventory/store/base.py): what the spec
declares becomes the store's, and a record's event names it by its path
(under its parent's when nested) and goes through its outbox to the feed."""
from inventory.core.spec import ResourceSpec
from inventory.store.base import ResourceStore
from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.pages import PageRequest


def test_what_the_spec_declares_becomes_the_stores():
    spec = ResourceSpec(name="things", kind="thing", event_kind="thing",
                        filter_fields={"name": "string"})
    things = type("ThingStore", (ResourceStore,), {"spec": spec, "key_field": "name"})
    assert (things.collection_name, things.kind, things.event_kind) == ("things", "thing",
                                                                        "thing")
    assert things.filter_fields == {"name": "string"} and things.path == spec.path


def test_an_event_names_its_record_by_its_path_and_goes_through_the_outbox(store, tree):
    _, platform, cluster, scan = tree
    doc = store.platforms.find_doc(platform["name"])
    assert store.platforms.subject(doc) == f"/{store.platforms.path}/{platform['name']}"
    scan_doc = store.scans.collection.find_one({"id": scan["id"]})
    assert store.scans.subject(scan_doc) == \
        f"/{store.clusters.path}/{cluster['name']}/{store.scans.path}/{scan['id']}"
    outboxed = store.platforms.with_event(doc, "updated", "a-key", {"title": {"from": "",
                                                                            "to": "x"}})
    (event,) = outboxed[OUTBOX]
    assert event["type"] == "kubeplatform.updated" and outboxed[OUTBOX_SINCE] is not None
    store.platforms.collection.update_one({"_id": doc["_id"]}, {"$set": {
        OUTBOX: outboxed[OUTBOX], OUTBOX_SINCE: outboxed[OUTBOX_SINCE]}})
    store.platforms.publish(doc["_id"])
    newest = store.events.page(PageRequest(1, backwards=True)).records[0]
    assert newest["type"] == "kubeplatform.updated" and newest["changes"] == {
        "title": {"from": "", "to": "x"}}
    assert OUTBOX not in store.platforms.collection.find_one({"_id": doc["_id"]})
