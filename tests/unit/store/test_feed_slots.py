"""The feed's order (inventory/store/feed_slots.py): slots taken in turn,
stamps that never go back, a key stored once, an empty slot closed only
once it is stale, and reads only within the settled run."""
from inventory.store import feed_slots
from inventory.store.feed_slots import next_slot_id, slot_id, slot_of
from inventory.store.pages import PageRequest


def _event(key, organization=None):
    return {"key": key, "type": "thing.created", "actor": "t", "subject": f"/things/{key}",
            **({"organization": organization} if organization else {})}


def _take_a_slot_and_leave_it(store):
    """A writer that took a slot and has not filled it (yet, or ever)."""
    store.events.counters.update_one({"_id": "event-slots"}, {"$inc": {"value": 1}})


def test_slot_ids_are_fixed_width_hex_that_sort_in_feed_order():
    assert slot_id(1) == "0000000000000001" and next_slot_id("000000000000000f") == \
        "0000000000000010"
    assert slot_of("0000000000000010") == "0000000000000010"
    assert slot_of("xyz") is None and slot_of("000000000000001G") is None


def test_appends_take_slots_in_turn_stamped_never_backwards_and_a_key_once(store):
    slots = [store.events.append(_event(f"k{i}")) for i in range(5)]
    assert slots == sorted(slots) and len(set(slots)) == 5
    assert store.events.append(_event("k2")) == slots[2]  # published before: the same slot
    stamps = [doc["occurred_on"] for doc in store.events.collection.find(
        {"gap": {"$exists": False}}, sort=[("_id", 1)])]
    assert stamps == sorted(stamps)
    head = store.events.head()  # the repeat's slot: a tombstone
    assert head == next_slot_id(slots[-1])
    assert store.events.collection.find_one({"_id": head})["gap"] is True


def test_a_reader_stops_before_an_empty_slot_until_it_is_stale(store, monkeypatch):
    first = store.events.append(_event("a"))
    _take_a_slot_and_leave_it(store)
    store.events.append(_event("b"))
    page = store.events.page(PageRequest(10))
    assert [e["subject"] for e in page.records] == ["/things/a"] and page.end == first
    monkeypatch.setattr(feed_slots, "GAP_SECONDS", 0)  # the slot after it is old enough now
    page = store.events.page(PageRequest(10, after=first))
    assert [e["subject"] for e in page.records] == ["/things/b"]
    assert store.events.collection.find_one({"_id": next_slot_id(first)})["gap"] is True
