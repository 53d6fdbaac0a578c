"""What every resource collection shares, put together: `ResourceStore`, one
collection whose `_id` is the API field `key_field`, as the resource's spec
declares it (inventory.core.spec), wired to its parent, children and the
change feed by `Store` (inventory.store).

It is made of small mixins, one module each: `records` (a record and its
stored document, keys), `order_keys` (the keys each ordering walks),
`reads` (scope, and reads under a parent), `inserts` (creates, under a live
parent, within a quota), `updates` (the merge-patch loop), `deletes` (the
mark and the cascade). Mixins, not parts held by the store: the resources'
stores override hooks of every part (`to_api`, `key_filter`, `identity`,
`derived_fields`, `has_records_under`...) and every caller asks the one
store object, so each part reads its collaborators from `self`, as before
the split, with no indirection added on the hot paths.

The writes without transactions, and why: docs/design/writes-and-deletes.md"""
from inventory.store.deletes import Deletes
from inventory.store.inserts import Inserts
from inventory.store.order_keys import OrderKeys
from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.query import FilterCompiler
from inventory.store.reads import ScopedReads
from inventory.store.records import RecordMapping, stored_now
from inventory.store.updates import MergePatches


class ResourceStore(RecordMapping, OrderKeys, ScopedReads, Inserts, MergePatches, Deletes):
    """One collection whose `_id` is the API field `key_field`."""

    spec = None  # the resource's declaration (inventory.core.spec.ResourceSpec)
    collection_name = None
    kind = None  # the resource's name in messages
    filter_fields = {}  # API field -> type, for `inventory.store.query`
    computed_filters = {}  # computed API field -> what compiles it (FilterCompiler)
    path = None  # the collection's path in the API (under its parent's record when nested)
    parent_store = None  # the parent's ResourceStore, set by Store

    def __init_subclass__(cls, **kwargs):
        """What the spec declares becomes the store's class attributes."""
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("spec")
        if spec is not None:
            cls.collection_name, cls.kind, cls.path = spec.name, spec.kind, spec.path
            cls.event_kind, cls.filter_fields = spec.event_kind, spec.filter_fields
            cls.orderings, cls.quota_kind = spec.orderings, spec.quota_kind
            cls.read_defaults, cls.envelope = spec.read_defaults, spec.envelope

    def __init__(self, db):
        self.collection = db[self.collection_name]
        # a nested child addressed by its key: unique among its parent's
        # children only, so its stored `_id` holds its parent's too (child_id)
        # and the key is a field of its own
        self.keyed_under_parent = bool(self.spec is not None and self.spec.nested
                                       and self.address_field == self.key_field)
        self.filter_compiler = FilterCompiler(self.filter_fields, self.stored_name,
                                              self.computed_filters)
        self.stored_address = self.stored_name(self.address_field)

    def configure(self, settings):
        """Take this store's settings from the store's (a dict); most have none."""

    # -- what a release step gives records written before -------------------

    backfilled = ()  # the stored fields add_missing_fields gives records (named: a new one reruns it)

    def add_missing_fields(self):
        """Give records written before a stored field existed their value
        (run by `create-indexes`, so at each release); how many. A resource
        with such fields says how."""
        return 0

    def settle_in_turns(self):
        """Set right the stored fields a record derives from others where a
        write left them behind: those written before the field existed, or
        by a process of the release before (run by `create-indexes`, and
        after each start of the embedded store has answered, in turns: at
        the envelope, a pass that writes every record takes longer than a
        start may); how many. Reads stay right meanwhile. A resource with
        such fields says how."""
        return 0

    def others_settled(self):
        """Records of the stores this one reads had derived fields set right
        with no event (settle_in_turns): what it keeps worked out of them is
        to be worked out again. Nothing by default."""

    def expiring(self):
        """(field, seconds): its records are kept for `seconds` after the
        date in `field`, then expired by a TTL index (or the service's sweep
        where the database refuses TTL indexes). None by default."""
        return ()

    # -- events -------------------------------------------------------------

    events = None  # the change feed (inventory.store.events.EventStore), set by Store
    feed = None  # the same, to read (set for every resource, events of its own or not)
    event_kind = None  # the record's name in event types (`kubecluster.created`)

    def subject(self, doc, parent=None):
        """The path of the record in `doc`, as the API addresses it: under its
        parent's (`parent`, the parent's document) when the spec nests it."""
        own = f"/{self.path}/{doc[self.stored_address]}"
        if not self.spec.nested:
            return own
        return f"{self.parent_store.subject(parent or self.parent_of(doc))}{own}"

    def parent_of(self, doc):
        """The stored document of the parent of the record in `doc` (marked too)."""
        held = "_id" if self.spec.parent_holds == "key" else "id"
        return self.parent_store.collection.find_one({held: doc[self.spec.parent_field]})

    def owner(self, doc, parent=None):
        """The organization the record in `doc` belongs to."""
        return doc.get("organization")

    def with_event(self, doc, action, key, changes=None, parent=None):
        """`doc` with a new event of it in its outbox (for the same write);
        `parent`, the parent's document where the record does not name it all."""
        event = self.events.event(self.event_kind, action, key, self.subject(doc, parent),
                                  self.to_answer(doc), self.owner(doc, parent), changes)
        since = doc.get(OUTBOX_SINCE) or stored_now()
        self.events.note_pending(self.collection, doc["_id"], since)
        return {**doc, OUTBOX: [*(doc.get(OUTBOX) or []), event], OUTBOX_SINCE: since}

    def publish(self, stored_key, pending=None):
        """Copy the record's pending events (`pending`, if the caller knows
        them) into the feed."""
        if self.events is not None:
            self.events.publish_pending(self.collection, stored_key, pending)
