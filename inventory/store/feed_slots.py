"""The feed's order: numbered slots, each filled once, by an event or by a
tombstone (an empty slot closed). A writer takes the next slot from one
counter and fills it; a reader reads only the settled run of filled slots
after where it stands, closing a slot left empty for GAP_SECONDS on the
way, so no event can appear later in a place a reader has passed.

`FeedSlots` is this part of the feed (inventory.store.events.EventStore).
The design, and why: docs/design/events.md"""
import threading
from datetime import timedelta

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from inventory.core.ids import now_rfc3339
from inventory.store import pages
from inventory.store.records import stored_now

# An empty slot is closed once the slot after it was filled this long ago:
# far longer than a writer takes between taking a slot and filling it.
GAP_SECONDS = 2.0
VISIBLE = {"gap": {"$exists": False}}  # an event, not a tombstone
_SLOT_DIGITS = 16


def slot_id(slot):
    return f"{slot:0{_SLOT_DIGITS}x}"


def slot_of(digits):
    """The slot that `digits` (an event id without its prefix) name, or None."""
    if len(digits) != _SLOT_DIGITS or any(c not in "0123456789abcdef" for c in digits):
        return None
    return digits


def next_slot_id(slot):
    return slot_id(int(slot, 16) + 1)


class FeedSlots:
    """Taking and filling slots, and finding the settled run."""

    def __init__(self):
        self._placing = threading.Lock()  # a slot and its stamp, in order (_placed)
        self._last_stamp = ""

    def append(self, event):
        """Store `event` in the feed once (its key is unique there): the slot
        of its copy, stamped `occurred_on` as it takes the slot (_placed)."""
        while True:
            slot, occurred_on = self._placed()
            try:
                self.collection.insert_one({**event, "_id": slot, "occurred_on": occurred_on,
                                            "at": stored_now()})
            except DuplicateKeyError:
                published = self.collection.find_one({"key": event["key"]}, {"_id": 1})
                if published is not None:
                    self._tombstone(slot)  # published before: our slot stays empty
                    return published["_id"]
                continue  # a reader closed our slot while we were slow: take another
            self._announce(slot, event.get("organization"))
            return slot

    def _placed(self):
        """(a new slot, its event's `occurred_on`): the time it took its place
        in the feed's order, never before the stamp of this process's slot
        before it. Taken together under one lock, so that along the feed's
        order the stamps of one process never go back: an event made before
        another (a scan's, before the cluster update it causes) may reach the
        feed after it, and several threads take slots at once. The slot's
        counter is one document that every writer updates in turn anyway
        (docs/design/events.md)."""
        with self._placing:
            slot = self._take_slot()
            self._last_stamp = max(now_rfc3339(), self._last_stamp)  # fixed width: text order
            return slot, self._last_stamp

    def _take_slot(self):
        # without upsert once the counter exists: a plain write by `_id`,
        # which the embedded store makes straight to the document
        counter = self.counters.find_one_and_update(
            {"_id": "event-slots"}, {"$inc": {"value": 1}},
            return_document=ReturnDocument.AFTER)
        if counter is None:
            counter = self.counters.find_one_and_update(
                {"_id": "event-slots"}, {"$inc": {"value": 1}}, upsert=True,
                return_document=ReturnDocument.AFTER)
        return slot_id(counter["value"])

    def position(self):
        """How many slots the feed has handed out (0 before any). It moves
        with every change written with an event, once the change is written:
        a reader that read it before reading records, and finds it unmoved
        later, knows that no change with an event was written since (a
        rollout's counts: RolloutStore). One read of one document by key."""
        counter = self.counters.find_one({"_id": "event-slots"}, {"value": 1})
        return 0 if counter is None else counter["value"]

    def _tombstone(self, slot):
        try:
            self.collection.insert_one({"_id": slot, "key": f"gap:{slot}", "gap": True,
                                        "at": stored_now()})
        except DuplicateKeyError:
            pass  # filled meanwhile, by its event or another tombstone

    def _settled_end(self, after):
        """(the last slot of the contiguous run after `after`, within
        MAX_EXAMINED; whether that run reaches the newest filled slot).
        (None, True) when nothing follows. A stale gap is closed on the way."""
        for _ in range(3):
            query = {"_id": {"$gt": after}} if after is not None else {}
            slots = [d["_id"] for d in self.collection.find(
                query, {"_id": 1}, sort=[("_id", 1)], limit=pages.MAX_EXAMINED + 1)]
            if not slots:
                return after, True
            expected = slots[0] if after is None else next_slot_id(after)
            last = after
            for slot in slots[:pages.MAX_EXAMINED]:
                if slot != expected:
                    break
                last, expected = slot, next_slot_id(slot)
            else:
                return last, len(slots) <= pages.MAX_EXAMINED
            # `expected` is empty while a later slot is filled
            if not self._close_if_stale(expected, slot):
                return last, False
        return last, False

    def _close_if_stale(self, gap, filled_after):
        """Close the empty slot `gap` if the slot after it (`filled_after`)
        was filled more than GAP_SECONDS ago; whether it is settled now."""
        doc = self.collection.find_one({"_id": filled_after}, {"at": 1})
        at = (doc or {}).get("at")
        if at is not None and stored_now() - at < timedelta(seconds=GAP_SECONDS):
            return False
        self._tombstone(gap)
        return True

    def head(self):
        """The newest slot filled, or "" (before every slot) on an empty feed."""
        return self.end_slot(-1) or ""

    def end_slot(self, direction):
        """The oldest (1) or newest (-1) slot filled, or None."""
        docs = self.collection.find({}, {"_id": 1}, sort=[("_id", direction)], limit=1)
        return docs[0]["_id"] if docs else None
