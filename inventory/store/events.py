"""The change feed: every accepted change as one event, in one order that all
readers share, each event delivered exactly once to a reader that resumes
from the last id it saw. Built on what every MongoDB deployment guarantees:
atomic single-document writes and unique indexes; no transactions.

`EventStore` puts together its parts, one module each: `outbox` (events
written with their records, then published; the sweeper), `feed_slots`
(the feed's order: slots, tombstones, the settled run), `feed_reads`
(pages, resume points) and `feed_waits` (waiting for the next commit); an
event's stored form is `event_documents`'. Mixins, as the resource stores'
(inventory.store.base): the parts call one another through `self`.

The design, and why: docs/design/events.md"""
from datetime import timedelta

from inventory.store.event_documents import event_document
from inventory.store.feed_reads import FeedReads
from inventory.store.feed_slots import FeedSlots
from inventory.store.feed_waits import FeedWaits
from inventory.store.outbox import Outboxes
from inventory.store.query import FilterCompiler


class EventStore(Outboxes, FeedSlots, FeedReads, FeedWaits):
    """The feed, and the events every resource store writes into it."""

    collection_name = "events"
    # `changed`: a field an update changed (its dotted path), so that a
    # reader or a webhook can follow one field (`changed="readiness.status"`)
    filter_fields = {"type": "string", "occurred_on": "timestamp", "actor": "string",
                     "organization": "string", "subject": "string", "changed": "string"}
    _STORED = {"changed": "changes.field"}  # `changes` is stored as a list of {"field", ...}

    event = staticmethod(event_document)  # a new event of a record, for its outbox

    def __init__(self, db, retention_days=30):
        Outboxes.__init__(self)
        FeedSlots.__init__(self)
        FeedWaits.__init__(self)
        self.collection = db[self.collection_name]
        self.counters = db["settings"]
        self.retention = timedelta(days=retention_days)
        self.filter_compiler = FilterCompiler(self.filter_fields,
                                              lambda field: self._STORED.get(field, field))

    def indexes(self):
        """Its indexes but the TTL index on `at` (Store.expiring)."""
        return [([("key", 1)], {"unique": True})]
