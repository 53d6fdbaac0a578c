"""The change feed: every accepted change as one event, in one order that all
readers share, each event delivered exactly once to a reader that resumes
from the last id it saw. Built on what every MongoDB deployment guarantees:
atomic single-document writes and unique indexes; no transactions.

The design, and why: docs/design/events.md"""
import contextlib
import contextvars
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import orjson
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from inventory.core.errors import BadResumePoint, EventExpired, NotFound
from inventory.core.filtering import path_text
from inventory.core.ids import now_rfc3339
from inventory.core.json_text import embedded, plain
from inventory.store import pages
from inventory.store.document_keys import api_document, stored_document
from inventory.store.outages import background
from inventory.store.pages import Page
from inventory.store.query import FilterCompiler

ALL = object()  # an announced event whose organization is not known
OUTBOX = "_outbox"  # a record's events not yet in the feed, oldest first
OUTBOX_SINCE = "_outbox_since"  # when its oldest pending event was written
# A record's pending events older than this are published by the sweeper: by
# then the request that wrote them has ended (its deadline is 30 s).
STALE_SECONDS = 60.0
SWEEP_SECONDS = 5.0
# An empty slot is closed once the slot after it was filled this long ago:
# far longer than a writer takes between taking a slot and filling it.
GAP_SECONDS = 2.0
# On MongoDB, how often one poller per process reads the newest slot for its waiters.
POLL_SECONDS = 0.5
VISIBLE = {"gap": {"$exists": False}}  # an event, not a tombstone
ID_PREFIX = "evt_"
# An event whose object or changes hold escaped keys (inventory.store.document_keys)
ESCAPED = "keys_escaped"
# An event's `object` (the record as the API showed it), as one JSON string:
# read whole and never queried, it costs the embedded store one object, not
# the dozens (a cluster's readiness and what it observed) that the cyclic
# garbage collector would walk in every full collection for as long as the
# event is kept (docs/design/events.md). Events stored before keep `object`.
OBJECT = "_object"
_SLOT_DIGITS = 16

_actor = contextvars.ContextVar("inventory_actor", default="system")


def acting_as(name):
    """Name the principal the events of this request (context) are by."""
    _actor.set(name)


@contextlib.contextmanager
def acting(name):
    """The events made inside are by `name`, whoever the request's caller
    is: a change the service makes itself (a rollout's stage whose turn
    came) is by `system`, even when a reader's read brought it."""
    token = _actor.set(name)
    try:
        yield
    finally:
        _actor.reset(token)


def slot_id(slot):
    return f"{slot:0{_SLOT_DIGITS}x}"


def event_slot(event_id):
    """The slot of an event id, or None if `event_id` is not one."""
    digits = event_id[len(ID_PREFIX):] if event_id.startswith(ID_PREFIX) else ""
    if len(digits) != _SLOT_DIGITS or any(c not in "0123456789abcdef" for c in digits):
        return None
    return digits


def _as_is(value):
    return value


def _next_slot_id(slot):
    return slot_id(int(slot, 16) + 1)


def _diff(before, after, prefix=()):
    """{dotted path: {"from", "to"}} of the leaves that differ, each path
    written as a filter names its field (a segment with a `.` or `/` quoted:
    `labels."app.kubernetes.io/name"`, so that the path stays unambiguous)."""
    changes = {}
    for key in sorted(set(before) | set(after), key=str):
        old, new = before.get(key), after.get(key)
        path = (*prefix, key)
        if isinstance(old, dict) and isinstance(new, dict):
            changes.update(_diff(old, new, path))
        elif old != new:
            changes[path_text(path)] = {"from": old, "to": new}
    return changes


# Audit fields change with every write; the event's own fields say who and when.
_UNCOMPARED = frozenset({"last_modified_by", "last_modified_on"})


@dataclass
class FeedPage(Page):
    end: str | None = None  # the last slot read: where a wait for newer events starts


def changes_between(before, after, computed=()):
    """The fields an update changed, as an event's `changes` (None: nothing).
    `computed` fields (worked out from others) are left out, nested ones
    (`readiness.checks`) by their dotted path: they change with the fields
    they are computed from, which are listed."""
    ignored = _UNCOMPARED | set(computed)
    changes = _diff({k: v for k, v in before.items() if k not in ignored},
                    {k: v for k, v in after.items() if k not in ignored})
    # a computed field may be a nested one (`readiness.checks`)
    changes = {path: change for path, change in changes.items()
               if not any(path == field or path.startswith(f"{field}.")
                          for field in computed if "." in field)}
    return changes or None


class EventStore:
    """The feed, and the events every resource store writes into it."""

    collection_name = "events"
    # `changed`: a field an update changed (its dotted path), so that a
    # reader or a webhook can follow one field (`changed="readiness.status"`)
    filter_fields = {"type": "string", "occurred_on": "timestamp", "actor": "string",
                     "organization": "string", "subject": "string", "changed": "string"}
    _STORED = {"changed": "changes.field"}  # `changes` is stored as a list of {"field", ...}

    def __init__(self, db, retention_days=30):
        self.collection = db[self.collection_name]
        self.counters = db["settings"]
        self.retention = timedelta(days=retention_days)
        self.filter_compiler = FilterCompiler(self.filter_fields,
                                              lambda field: self._STORED.get(field, field))
        self.sources = []  # the resource stores whose records hold outboxes
        # Whether other processes write the same feed (MongoDB), so that
        # waiters must poll for their events too.
        self.shared = False
        # Waiters sleep on their scope's condition: a commit wakes those that
        # may see its event (its organization's, and the unscoped), not all.
        self._lock = threading.RLock()
        self._placing = threading.Lock()  # a slot and its stamp, in order (_placed)
        self._last_stamp = ""
        self._committed = threading.Condition(self._lock)  # unscoped waiters
        self._scoped = {}  # organization: its waiters' Condition
        self._heads = {}  # organization: the newest slot of its events this process saw
        self.wakeups = 0  # waits woken by a commit, not timed out (for the tests: a
        # commit wakes only its scope's; a stream's or wait's look each second is none)
        self._head = None  # the newest slot this process has seen filled
        self._waiting = 0
        self._wakes = 0  # counts wake_all()s
        self._polling = False
        # On the embedded store (not shared), the records with events not
        # yet in the feed, noted as their writers write them: {collection:
        # {key: since}}, so that a sweep costs what is pending, not what is
        # stored. A collection's first sweep in this process reads which
        # records an earlier process left pending.
        self._pending = {}
        # Called with each commit's organization (None: of none; ALL: not
        # known), under the feed's lock: they must only note it (the
        # webhooks' deliverer wakes for the organizations that have webhooks).
        self.listeners = []

    def indexes(self):
        """Its indexes but the TTL index on `at` (Store.expiring)."""
        return [([("key", 1)], {"unique": True})]

    # -- making events ------------------------------------------------------

    @staticmethod
    def event(kind, action, key, subject, record, organization, changes=None):
        """A new event of `record` (as the API shows it) for an outbox."""
        # the record's maps (labels) may hold keys a document cannot (`.`):
        # stored escaped, as their records are (inventory.store.document_keys),
        # and the event says so, so that reading the others costs nothing
        # its `occurred_on` is stamped as it takes its place in the feed (append)
        event = {"key": key, "type": f"{kind}.{action}", "actor": _actor.get(),
                 "subject": subject}
        escaped = False
        try:  # a JSON string's keys need no escape
            event[OBJECT] = orjson.dumps(record, default=embedded).decode()
        except orjson.JSONEncodeError:  # beyond JSON's integers (64 bits): as a document
            record = dict(plain(record))
            event["object"] = stored_document(record)
            escaped = event["object"] is not record
        if organization is not None:
            event["organization"] = organization
        if changes is not None:  # stored as a list: its paths are not document keys
            event["changes"] = []
            for path, change in changes.items():
                before, after = stored_document(change["from"]), stored_document(change["to"])
                escaped = escaped or before is not change["from"] or after is not change["to"]
                event["changes"].append({"field": path, "from": before, "to": after})
        if escaped:
            event[ESCAPED] = True
        return event

    # -- publishing ---------------------------------------------------------

    def publish_pending(self, collection, stored_key, pending=None):
        """Copy the pending events of one record into the feed, oldest first,
        then take them out of its outbox. `pending`: the outbox as the caller
        just wrote it (saves reading it again)."""
        if pending is None:
            doc = collection.find_one({"_id": stored_key}, {OUTBOX: 1})
            pending = (doc or {}).get(OUTBOX) or []
        for event in pending:
            self.append(event)
        if pending:
            self._clear_outbox(collection, stored_key, pending)
        else:  # its writer published it meanwhile: nothing to look at again
            self._pending.get(collection.name, {}).pop(stored_key, None)

    def note_pending(self, collection, stored_key, since):
        """A writer is writing events into the record's outbox (`since` then)."""
        if not self.shared:
            pending = self._pending.get(collection.name)
            if pending is not None:
                pending.setdefault(stored_key, since)

    def _clear_outbox(self, collection, stored_key, published):
        """Take the `published` events out of the record's outbox. A set of
        the whole list, conditional on the list read: a writer that added an
        event meanwhile keeps it (and the embedded store writes this by key,
        which it cannot for $pull)."""
        current, keys = published, {event["key"] for event in published}
        for _ in range(10):
            remaining = [e for e in current if e["key"] not in keys]
            update = {"$set": {OUTBOX: remaining}} if remaining else \
                {"$unset": {OUTBOX: "", OUTBOX_SINCE: ""}}
            if collection.update_one({"_id": stored_key, OUTBOX: current},
                                     update).matched_count:
                if not remaining:
                    self._pending.get(collection.name, {}).pop(stored_key, None)
                return
            doc = collection.find_one({"_id": stored_key}, {OUTBOX: 1})
            current = (doc or {}).get(OUTBOX)
            if not current:
                self._pending.get(collection.name, {}).pop(stored_key, None)
                return

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

    # -- reading ------------------------------------------------------------

    def resolve(self, event_id, location):
        """The slot of a resume point, checked: BadContinuation if it is not
        an event id, EventExpired if the feed no longer keeps it."""
        slot = event_slot(event_id or "")
        if slot is None:
            raise BadResumePoint(f"Not an event id (evt_ and 16 hex digits): {event_id!r}.",
                                 event_id, location)
        if self.collection.find_one({"_id": slot}, {"_id": 1}) is None:
            oldest = self._end_slot(1)
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
            page = pages.walk(self.collection, request, self._to_api, query=query,
                              scope_query=scope_query, visible=VISIBLE)
            return FeedPage(page.records, page.next_after, None)
        end, at_head = self._settled_end(request.after)
        if end is None or end == request.after:
            return FeedPage([], None, request.after)
        page = pages.walk(
            self.collection, request, self._to_api, query=query,
            scope_query=scope_query, visible=VISIBLE, upper=_next_slot_id(end),
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
            if last is not None and doc["_id"] != _next_slot_id(last):
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

    @property
    def seen_head(self):
        """The newest slot this process has seen filled ("" before any):
        what a wait for the next commit waits after."""
        return self._head or ""

    def compile_filter(self, tree, now=None):
        return self.filter_compiler.compile(tree, now) if tree is not None else None

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
            expected = slots[0] if after is None else _next_slot_id(after)
            last = after
            for slot in slots[:pages.MAX_EXAMINED]:
                if slot != expected:
                    break
                last, expected = slot, _next_slot_id(slot)
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
        return self._end_slot(-1) or ""

    def _end_slot(self, direction):
        """The oldest (1) or newest (-1) slot filled, or None."""
        docs = self.collection.find({}, {"_id": 1}, sort=[("_id", direction)], limit=1)
        return docs[0]["_id"] if docs else None

    def get(self, event_id, scope=None):
        slot = event_slot(event_id)
        query = {"_id": slot, "gap": {"$exists": False}}
        if scope is not None:
            query["organization"] = scope
        doc = self.collection.find_one(query) if slot else None
        if doc is None:
            raise NotFound(f"No event {event_id!r}.")
        return self._to_api(doc)

    @staticmethod
    def _to_api(doc):
        event = {"id": ID_PREFIX + doc["_id"]}
        event.update((k, v) for k, v in doc.items()
                     if k not in ("_id", "key", "at", ESCAPED, OBJECT))
        unescaped = api_document if doc.get(ESCAPED) else _as_is
        if OBJECT in doc:
            event["object"] = orjson.loads(doc[OBJECT])
        elif "object" in event:
            event["object"] = unescaped(event["object"])
        if isinstance(event.get("changes"), list):  # {dotted path: {"from", "to"}} in the API
            event["changes"] = {change["field"]: {"from": unescaped(change["from"]),
                                                  "to": unescaped(change["to"])}
                                for change in event["changes"]}
        return event

    # -- waiting ------------------------------------------------------------

    def _announce(self, slot, organization=ALL):
        """`slot` is filled, with an event of `organization` (None: of no
        organization; ALL: not known, as when another process's is seen)."""
        with self._lock:
            if self._head is None or slot > self._head:
                self._head = slot
            scopes = list(self._scoped) if organization is ALL else \
                [] if organization is None else [organization]
            for scope in scopes:
                if self._heads.get(scope) is None or slot > self._heads[scope]:
                    self._heads[scope] = slot
                waiters = self._scoped.get(scope)
                if waiters is not None:
                    waiters.notify_all()
            self._committed.notify_all()
            for listener in self.listeners:
                listener(organization)

    def wake_all(self):
        """Wake every waiter to look again (a token was revoked): their waits
        end with False, as if their time was up."""
        with self._lock:
            self._wakes += 1
            self._committed.notify_all()
            for waiters in self._scoped.values():
                waiters.notify_all()

    def wait(self, after, seconds, scope=None):
        """Wait until an event after slot `after` that a caller confined to
        `scope` (an organization; None: all) may see may be in the feed
        (True), or `seconds` pass (False). Only commits of events in that
        scope wake it. This process's own writes wake waiters at once; other
        processes' (on a shared database) are seen by one poller per
        process, reading the newest slot every POLL_SECONDS while anyone
        waits (and waking every scope: it cannot tell whose they are). A
        waiter holds no thread, no connection and no loop."""
        deadline = time.monotonic() + seconds
        if self.shared:
            self._poll_while_waited()
        with self._lock:
            if scope is None:
                waiters, head = self._committed, lambda: self._head
            else:
                waiters = self._scoped.setdefault(scope, threading.Condition(self._lock))
                head = lambda: self._heads.get(scope)  # noqa: E731
            self._waiting += 1
            woken = self._wakes
            try:
                while head() is None or (after is not None and head() <= after):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._wakes != woken:
                        return False
                    if waiters.wait(remaining):  # woken, not timed out
                        self.wakeups += 1
                return True
            finally:
                self._waiting -= 1

    def _poll_while_waited(self):
        with self._lock:
            if self._polling:
                return
            self._polling = True

        def poll():
            try:
                while True:
                    time.sleep(POLL_SECONDS)
                    with self._lock:
                        if not self._waiting:
                            self._polling = False
                            return
                    try:
                        newest = self._end_slot(-1)
                    except Exception:  # the database may be away: poll again
                        continue
                    if newest is not None and (self._head is None or newest > self._head):
                        self._announce(newest)
            except BaseException:
                self._polling = False
                raise
        threading.Thread(target=poll, name="event-poller", daemon=True).start()

    # -- the sweeper --------------------------------------------------------

    def sweep(self, older_than=STALE_SECONDS):
        """Publish the pending events of records whose writer has not (it
        died, or is stalled): how many records were swept."""
        cutoff = stored_now() - timedelta(seconds=older_than)
        swept = 0
        for source in self.sources:
            for key in self._stale(source.collection, cutoff):
                self.publish_pending(source.collection, key)
                swept += 1
        return swept

    def _stale(self, collection, cutoff):
        """The keys of the collection's records whose outbox is older than `cutoff`."""
        if self.shared:  # other processes write too: the sparse index serves the query
            return [doc["_id"] for doc in
                    collection.find({OUTBOX_SINCE: {"$lt": cutoff}}, {"_id": 1})]
        pending = self._pending.get(collection.name)
        if pending is None:
            # this process's first look, in the first sweep (not at start: a
            # pass over every record, which at the envelope would add a second
            # to the start; the walk goes in slices while requests are served):
            # what an earlier process left. The writers noted during the walk
            # are kept: the dict is there before it.
            pending = self._pending[collection.name] = {}
            for key in collection.keys_having(OUTBOX_SINCE):
                pending.setdefault(key, datetime.min)
        return [key for key, since in list(pending.items()) if since < cutoff]

    def start_sweeping(self):
        """Sweep now and every SWEEP_SECONDS, in this process, for its life."""
        def run():
            while True:
                with background("Publishing the events writers left pending"):
                    self.sweep()
                time.sleep(SWEEP_SECONDS)
        threading.Thread(target=run, name="event-sweeper", daemon=True).start()



def stored_now():
    """Now, as stored: a naive UTC datetime (what pymongo hands back, and
    what TTL indexes read as UTC), to the millisecond (BSON's precision)."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)
