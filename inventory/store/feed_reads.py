"""Reading the feed: a page of events after a resume point (an event id), in
feed order, only ever within the settled run of slots (inventory.store.
feed_slots), so that a reader resuming from the last id it saw gets each
event exactly once; newest first; one event; and what the webhooks'
deliverer follows the feed by.

`FeedReads` is this part of the feed (inventory.store.events.EventStore)."""
from dataclasses import dataclass

from inventory.core.errors import BadResumePoint, EventExpired, NotFound
from inventory.store import pages
from inventory.store.event_documents import ID_PREFIX, event_to_api
from inventory.store.feed_slots import VISIBLE, next_slot_id, slot_of
from inventory.store.pages import Page


def event_slot(event_id):
    """The slot of an event id, or None if `event_id` is not one."""
    return slot_of(event_id[len(ID_PREFIX):] if event_id.startswith(ID_PREFIX) else "")


@dataclass
class FeedPage(Page):
    end: str | None = None  # the last slot read: where a wait for newer events starts


class FeedReads:
    """The feed's reads."""

    def resolve(self, event_id, location):
        """The slot of a resume point, checked: BadContinuation if it is not
        an event id, EventExpired if the feed no longer keeps it."""
        slot = event_slot(event_id or "")
        if slot is None:
            raise BadResumePoint(f"Not an event id (evt_ and 16 hex digits): {event_id!r}.",
                                 event_id, location)
        if self.collection.find_one({"_id": slot}, {"_id": 1}) is None:
            oldest = self.end_slot(1)
            if oldest is not None and slot < oldest:
                raise EventExpired(event_id, location)
        return slot

    def page(self, request):
        """The FeedPage of events `request` (an inventory.store.pages.PageRequest,
        in key order: its bound a slot, None for the oldest kept) asks for,
        in feed order, read by the walk every list uses. Its window is the
        settled run after the bound: at most MAX_EXAMINED slots, never past
        an unfilled one."""
        # a bad filter is refused on an empty feed too
        query = self.compile_filter(request.tree, request.now)
        scope_query = {"organization": request.scope} if request.scope is not None else None
        if request.backwards:  # newest first: every filled slot, read as any list is
            page = pages.walk(self.collection, request, event_to_api, query=query,
                              scope_query=scope_query, visible=VISIBLE)
            return FeedPage(page.records, page.next_after, None)
        end, at_head = self._settled_end(request.after)
        if end is None or end == request.after:
            return FeedPage([], None, request.after)
        page = pages.walk(
            self.collection, request, event_to_api, query=query,
            scope_query=scope_query, visible=VISIBLE, upper=next_slot_id(end),
            # the next page starts after the run's end unless it is the newest slot
            window=(None if at_head else end,))
        return FeedPage(page.records, page.next_after, end)

    def organizations_after(self, after):
        """What the webhooks' deliverer follows the feed by: (the last slot
        of the settled run after slot `after` (within MAX_EXAMINED slots),
        {organization (None: of none): the slot of its newest event in that
        run}, whether more follows the run). One read when no slot in it is
        empty, as every slot is but the newest few for a moment."""
        query = {"_id": {"$gt": after}} if after else {}
        docs = self.collection.find(query, {"organization": 1, "gap": 1}, sort=[("_id", 1)],
                                    limit=pages.MAX_EXAMINED + 1)
        newest, last = {}, after or None
        for doc in docs[:pages.MAX_EXAMINED]:
            if last is not None and doc["_id"] != next_slot_id(last):
                break  # an empty slot: settled (or not yet) as any reader settles it
            last = doc["_id"]
            if not doc.get("gap"):
                newest[doc.get("organization")] = doc["_id"]
        else:
            return last or after, newest, len(docs) > pages.MAX_EXAMINED
        end, at_head = self._settled_end(after or None)
        if end is None or end == (after or None):
            return after, {}, False
        bounds = {"$lte": end, **({"$gt": after} if after else {})}
        newest = {}
        for doc in self.collection.find({"_id": bounds, **VISIBLE}, {"organization": 1},
                                        sort=[("_id", 1)], limit=pages.MAX_EXAMINED + 1):
            newest[doc.get("organization")] = doc["_id"]
        return end, newest, not at_head

    def compile_filter(self, tree, now=None):
        return self.filter_compiler.compile(tree, now) if tree is not None else None

    def get(self, event_id, scope=None):
        slot = event_slot(event_id)
        query = {"_id": slot, "gap": {"$exists": False}}
        if scope is not None:
            query["organization"] = scope
        doc = self.collection.find_one(query) if slot else None
        if doc is None:
            raise NotFound(f"No event {event_id!r}.")
        return event_to_api(doc)
