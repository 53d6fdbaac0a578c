"""A record's outbox: each change's event is written into the changed
record, in the same single-document write, then copied into the feed and
taken out (`publish_pending`). A writer that dies between the two leaves it
pending; the sweeper publishes what is older than STALE_SECONDS.

`Outboxes` is this part of the feed (inventory.store.events.EventStore).
The design, and why: docs/design/events.md"""
from datetime import datetime, timedelta

from inventory.store.outages import every
from inventory.store.records import stored_now

OUTBOX = "_outbox"  # a record's events not yet in the feed, oldest first
OUTBOX_SINCE = "_outbox_since"  # when its oldest pending event was written
# A record's pending events older than this are published by the sweeper: by
# then the request that wrote them has ended (its deadline is 30 s).
STALE_SECONDS = 60.0
SWEEP_SECONDS = 5.0
CLEAR_ATTEMPTS = 10  # conditional rewrites of an outbox before leaving it to the sweeper


class Outboxes:
    """Publishing the records' pending events, and sweeping those left."""

    def __init__(self):
        self.sources = []  # the resource stores whose records hold outboxes
        # On the embedded store (not shared), the records with events not
        # yet in the feed, noted as their writers write them: {collection:
        # {key: since}}, so that a sweep costs what is pending, not what is
        # stored. A collection's first sweep in this process reads which
        # records an earlier process left pending.
        self._pending = {}

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
        for _ in range(CLEAR_ATTEMPTS):
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
            # what an earlier process left, and what this one's writers wrote
            # before it, each as old as its record says (a writer may still be
            # at it). The writers noted during the walk are kept: the dict is
            # there before it.
            pending = self._pending[collection.name] = {}
            for key in collection.keys_having(OUTBOX_SINCE):
                doc = collection.find_one({"_id": key}, {OUTBOX_SINCE: 1}) or {}
                pending.setdefault(key, doc.get(OUTBOX_SINCE) or datetime.min)
        return [key for key, since in list(pending.items()) if since < cutoff]

    def start_sweeping(self):
        """Sweep now and every SWEEP_SECONDS, in this process, for its life."""
        every(SWEEP_SECONDS, "Publishing the events writers left pending", "event-sweeper",
              self.sweep)
