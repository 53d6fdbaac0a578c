"""What every resource collection shares: key mapping, pages, inserts,
partial updates, and the deletion mark that keeps children from being orphaned.

Orphans, without transactions
-----------------------------
MongoDB guarantees atomic single-document writes; nothing here relies on
more. Deletes and creates follow one protocol:

The design, and why: docs/design/writes-and-deletes.md"""
import secrets
from datetime import datetime
from functools import cached_property

import orjson
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from inventory.core.errors import (
    Contended,
    HasChildren,
    ImmutableField,
    InvalidRecord,
    InvalidReference,
    KeyInUse,
    NotAllowed,
    NotFound,
    StaleRevision,
)
from inventory.core.ids import now_rfc3339
from inventory.store import pages
from inventory.store.events import OUTBOX, OUTBOX_SINCE, changes_between, stored_now
from inventory.store.order_keys import order_key
from inventory.store.pages import all_of
from inventory.store.query import FilterCompiler

DELETING = "_deleting"  # True: marked by a delete; FORCED: by a forced one or its cascade
FORCED = "forced"
LIVE = {DELETING: {"$exists": False}}
# what a delete reads of the records it removes (children are found by `_id` or `id`)
_CASCADED = {"_id": 1, "id": 1, "organization": 1, DELETING: 1}
REVISION = "_rev"  # changes with every write: the record's ETag

# Above what the schemas allow a record to grow to: a last guard on the
# merged result of updates.
MAX_RECORD_BYTES = 128 * 1024
UPDATE_ATTEMPTS = 10  # read-check-write rounds before an update gives up (409)
# Records one step of a forced delete removes: each write (a mark, a delete
# of a batch's children) stays small, however large the subtree.
CASCADE_BATCH = 100


# immutable: a record shares them with the stored document (datetime: the audit times)
_SCALARS = frozenset({str, int, float, bool, type(None), datetime})


def _copied(value):
    """A copy of a stored value's objects and arrays as dicts and lists
    (anything else in a stored document is immutable)."""
    kind = value.__class__
    if kind is dict:  # most are flat (labels, `observed`): copied in C, then what nests
        copy = value.copy()
        for k, v in value.items():
            if v.__class__ not in _SCALARS:
                copy[k] = _copied(v)
        return copy
    if kind is list or kind is tuple:
        return [v if v.__class__ in _SCALARS else _copied(v) for v in value]
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copied(v) for v in value]
    return value


_SHOWN_FIELDS = {}  # a document's field names: those it shows
_SHAPES_KEPT = 1024  # distinct sets of field names remembered (begun again past it)


def _shown_fields(doc):
    """The fields of `doc` a record shows: all but the store's own (starting
    with "_": `_id`, marks, sort keys, what is stored as text). Worked out
    once per set of field names: the documents of a collection share a few,
    and a cluster's has more of the store's own fields than shown ones."""
    names = tuple(doc)
    shown = _SHOWN_FIELDS.get(names)
    if shown is None:
        if len(_SHOWN_FIELDS) >= _SHAPES_KEPT:
            _SHOWN_FIELDS.clear()
        shown = _SHOWN_FIELDS[names] = tuple(k for k in names if k[:1] != "_")
    return shown


def new_revision():
    return secrets.token_hex(8)


class Record(dict):
    """A record as the API shows it, with the revision its ETag is made of."""

    revision = None


def _merged(doc, sets, unsets):
    """`doc` as it will be after `$set`/`$unset` of dotted paths."""
    merged = {**doc}
    for path, value in [*sets.items(), *((path, None) for path in unsets)]:
        *parents, last = path.split(".")
        node = merged
        for part in parents:
            inner = node.get(part)
            node[part] = dict(inner) if isinstance(inner, dict) else {}
            node = node[part]
        if path in unsets:
            node.pop(last, None)
        else:
            node[last] = value
    return merged


def _merge_patch(prefix, value, sets, unsets):
    """Flatten an RFC 7386 merge patch into dotted `$set`/`$unset` paths:
    objects merge key by key (`{}` changes nothing), null removes."""
    if isinstance(value, dict):
        for key, inner in value.items():
            _merge_patch(f"{prefix}.{key}", inner, sets, unsets)
    elif value is None:
        unsets[prefix] = ""
    else:
        sets[prefix] = value


class ResourceStore:
    """One collection whose `_id` is the API field `key_field`."""

    spec = None  # the resource's declaration (inventory.core.spec.ResourceSpec)
    collection_name = None
    kind = None  # the resource's name in messages
    key_field = None
    filter_fields = {}  # API field -> type, for `inventory.store.query`
    computed_filters = {}  # computed API field -> what compiles it (FilterCompiler)
    read_defaults = {}

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

    @property
    def shown(self):
        """What reads records to show them: on the embedded store, reads that
        hand out the stored documents uncopied (`to_api` copies what it
        keeps); pymongo's documents are the caller's own already. Asked of
        the class: a pymongo collection answers any attribute it lacks with
        a sub-collection of that name."""
        collection = self.collection
        return collection.uncopied if hasattr(type(collection), "uncopied") else collection

    # -- events -------------------------------------------------------------

    events = None  # the change feed (inventory.store.events.EventStore), set by Store
    feed = None  # the same, to read (set for every resource, events of its own or not)
    event_kind = None  # the record's name in event types (`kubecluster.created`)
    removal_events = True  # whether removing a record is an event (a scan's is not)

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

    path = None  # the collection's path in the API (under its parent's record when nested)
    parent_store = None  # the parent's ResourceStore, set by Store

    @property
    def address_field(self):
        """The API field whose value addresses a record in a path."""
        return self.key_field

    def owner(self, doc, parent=None):
        """The organization the record in `doc` belongs to."""
        return doc.get("organization")

    def with_event(self, doc, action, key, changes=None, parent=None):
        """`doc` with a new event of it in its outbox (for the same write);
        `parent`, the parent's document where the record does not name it all."""
        event = self.events.event(self.event_kind, action, key, self.subject(doc, parent),
                                  self.to_api(doc), self.owner(doc, parent), changes)
        since = doc.get(OUTBOX_SINCE) or stored_now()
        self.events.note_pending(self.collection, doc["_id"], since)
        return {**doc, OUTBOX: [*(doc.get(OUTBOX) or []), event], OUTBOX_SINCE: since}

    def publish(self, stored_key, pending=None):
        """Copy the record's pending events (`pending`, if the caller knows
        them) into the feed."""
        if self.events is not None:
            self.events.publish_pending(self.collection, stored_key, pending)

    # -- mapping between API records and stored documents -----------------

    def to_api(self, doc):
        """The record `doc` holds, as the API shows it. `doc` may be the
        stored document itself (`shown`): the record's objects and arrays are
        copies, made in the same walk, so no caller can change the store
        through it."""
        record = Record({self.key_field: doc["_id"]})
        for k in _shown_fields(doc):
            v = doc[k]
            record[k] = v if v.__class__ in _SCALARS else _copied(v)
        for name, value in self.read_defaults.items():
            record.setdefault(name, value)
        record.revision = doc.get(REVISION)
        return record

    def stored_name(self, field):
        return "_id" if field == self.key_field and not self.keyed_under_parent else field

    @staticmethod
    def child_id(under, key):
        """The stored `_id` of a nested child's record at `key` under the
        parent that `under` (its `parent_value`) names: two parents may each
        have a child of that key, and the `_id` index keeps it unique within
        one (for ordering by key, a parent's children share the prefix)."""
        return f"{under}/{key}"

    # -- orderings ----------------------------------------------------------
    # Each declared ordering (inventory.core.ordering) is walked on one stored
    # field: the key itself when it orders by the key, else an order key
    # (inventory.store.order_keys) that every write keeps up to date.

    orderings = None  # inventory.core.ordering.Orderings of this list

    def order_field(self, ordering):
        """The stored field a declared ordering walks."""
        if ordering is None or ordering.fields == ((self.key_field, False),):
            return "_id"
        return "_order_" + "__".join(name.replace(".", "_") + ("_desc" if descending else "")
                                     for name, descending in ordering.fields)

    @cached_property
    def _order_keys(self):
        """[(ordering, stored field, its field names, order_key parts)] of the
        orderings kept in an order key: worked out once, used by every write."""
        kept = []
        for ordering in self.orderings.declared if self.orderings else ():
            field = self.order_field(ordering)
            if field != "_id":
                kept.append((ordering, field, frozenset(name for name, _ in ordering.fields),
                             [(self.stored_name(name), self.filter_fields[name], descending)
                              for name, descending in ordering.fields]))
        return kept

    def kept_orderings(self):
        """[(ordering, stored field)] of the orderings kept in an order key."""
        return [(ordering, field) for ordering, field, _, _ in self._order_keys]

    def order_fields(self, doc, changed=None):
        """{stored field: order key} of `doc` for the orderings kept in a
        field (only those involving a field of `changed`, if given)."""
        return {field: order_key(doc, parts) for _, field, names, parts in self._order_keys
                if changed is None or names & set(changed)}

    def order_indexes(self):
        """The indexes the order keys need: each alone, and after the
        organization for scoped callers, whose pages are within one."""
        for _, field in self.kept_orderings():
            yield [(field, 1)]
            if self.scope_field not in (None, "_id"):
                yield [(self.scope_field, 1), (field, 1)]

    backfilled = ()  # the stored fields add_missing_fields gives records (named: a new one reruns it)

    def add_missing_fields(self):
        """Give records written before a stored field existed their value
        (run by `create-indexes`, so at each release); how many. A resource
        with such fields says how."""
        return 0

    def expiring(self):
        """(field, seconds): its records are kept for `seconds` after the
        date in `field`, then expired by a TTL index (or the service's sweep
        where the database refuses TTL indexes). None by default."""
        return ()

    def add_missing_order_keys(self):
        """Give records written before an ordering was declared its order
        key (run by `create-indexes`, so at each release); how many."""
        fields = [field for _, field in self.kept_orderings()]
        if not fields:
            return 0
        done = 0
        for doc in self.collection.find({"$or": [{f: {"$exists": False}} for f in fields]}):
            done += self.collection.update_one(
                {"_id": doc["_id"], REVISION: doc.get(REVISION)},
                {"$set": self.order_fields(doc)}).modified_count
        return done

    def key_filter(self, key):
        """The query that finds the record addressed by `key` in a path."""
        return {"_id": key}

    # -- organization scope -------------------------------------------------
    # A caller scoped to one organization passes `scope` (its id). Every read
    # and write then matches only that organization's records, in the query
    # itself: others' records do not exist for it, and pages stay full.

    scope_field = None  # the stored field holding the owning organization's id

    def scope_filter(self, scope):
        return {self.scope_field: scope} if scope is not None else {}

    def match(self, key, scope=None, live=True, under=None):
        """The live record at `key` (or any, marked too), if the scope reaches
        it; with `under` (a nested child's `parent_value`), only among that
        parent's children."""
        # all_of, not a merged dict: a scope on `_id` must not replace the key
        found = self.key_filter(key) if under is None else self.key_under(under, key)
        return all_of(found, LIVE if live else None, self.scope_filter(scope))

    def key_under(self, under, key):
        """The query that finds the record addressed by `key` among the
        children of the parent `under` names (and under no other)."""
        if self.keyed_under_parent:
            return {"_id": self.child_id(under, key)}
        return {self.stored_address: key, self.spec.parent_field: under}

    def identity(self, doc):
        """The query that finds this very record and no later one that takes
        its key: by `_id`, which for server-made ids is never reused."""
        return {"_id": doc["_id"]}

    # -- reads ------------------------------------------------------------

    def find_doc(self, key, scope=None, shown=False, under=None):
        """The stored document of the live record at `key`, or None; `shown`:
        read to be shown (`to_api`), not changed (`self.shown`); `under`: of
        a nested child, its parent's `parent_value`."""
        return (self.shown if shown else self.collection).find_one(
            self.match(key, scope, under=under))

    def get_doc(self, key, scope=None, shown=False, under=None):
        doc = self.find_doc(key, scope, shown, under)
        if doc is None:
            raise NotFound(self._not_found(key, under))
        return doc

    def _not_found(self, key, under=None):
        if under is None:
            return f"No {self.kind} {key!r}."
        return f"No {self.kind} {key!r} of this {self.parent_store.kind}."

    def get(self, key, scope=None):
        return self.to_api(self.get_doc(key, scope, shown=True))

    def still_live(self, doc):
        """Whether the record `doc` was read from is still there and unmarked."""
        return self.collection.find_one(all_of(self.identity(doc), LIVE), {"_id": 1}) is not None

    def list(self, request):
        """The page `request` (an inventory.store.pages.PageRequest) asks for."""
        return pages.walk(self.shown, request, self.to_api,
                          field=self.order_field(request.ordering),
                          query=self.compile_filter(request.tree, request.now),
                          scope_query=self.scope_filter(request.scope), visible=LIVE)

    # -- reads under a parent (a nested resource: `spec.nested`) -------------
    # `under` is what the records' `parent_field` holds of their parent
    # (`parent_value`); the parent was found in the caller's scope.

    def list_under(self, under, request):
        """The page `request` asks for of the records under one parent."""
        return pages.walk(self.shown, request, self.to_api,
                          field=self.order_field(request.ordering),
                          query=self.compile_filter(request.tree, request.now),
                          scope_query={self.spec.parent_field: under}, visible=LIVE)

    def get_under(self, under, key):
        """The record at `key` under one parent."""
        return self.to_api(self.get_doc(key, shown=True, under=under))

    def compile_filter(self, tree, now=None):
        return self.filter_compiler.compile(tree, now) if tree is not None else {}

    # -- writes -----------------------------------------------------------

    def insert(self, doc, publish=True, parent=None):
        """Insert `doc` with its `created` event; publish it unless the caller
        has a check to make first."""
        doc.setdefault(REVISION, new_revision())
        doc.update(self.order_fields(doc))
        if self.events is not None:
            doc.update(self.with_event(doc, "created", f"{self.event_kind}:{doc['_id']}:"
                                       f"{doc[REVISION]}:created", parent=parent))
        try:
            self.collection.insert_one(doc)
        except DuplicateKeyError:
            # says nothing of whose it is: names are unique in the whole
            # deployment, so the answer must not tell one tenant of another's
            key = doc[self.key_field] if self.keyed_under_parent else doc["_id"]
            raise KeyInUse(f"The {self.kind} name {key!r} is not available; "
                           "choose another.") from None
        if publish:
            self.publish(doc["_id"], doc.get(OUTBOX))

    # -- quotas (inventory.store.quotas) ------------------------------------

    quota_kind = None  # the quota of the owning organization a record counts against
    quotas = None  # inventory.store.quotas.Quotas, set by Store

    def reservation_id(self, doc):
        """What tells this record from any other that takes its key."""
        return doc["_id"]

    def insert_under(self, doc, parent_store, parent_doc, refused, org_id=None):
        """Insert `doc`, then undo it if the parent read as `parent_doc` went
        away meanwhile (the protocol above). With `org_id`, the record counts
        against that organization's quota (inventory.store.quotas): reserved
        before the insert, settled after it. Its event is published only once
        it stays."""
        counted = self.quota_kind is not None and org_id is not None
        if counted and not self.quotas.reserve(org_id, self.quota_kind,
                                               self.reservation_id(doc), self.identity(doc)):
            raise refused
        try:
            self.insert(doc, publish=False, parent=parent_doc)
        except BaseException:
            if counted:
                self.quotas.release(org_id, self.quota_kind, self.reservation_id(doc))
            raise
        if counted and not self.quotas.settle(org_id, self.quota_kind, self.reservation_id(doc)):
            # its place was given back: the organization was deleted, or this
            # request outlived its reservation's lease
            self.collection.delete_one(self.identity(doc))
            if not parent_store.still_live(parent_doc):
                raise refused
            raise Contended(f"Creating the {self.kind} took too long; retry.")
        if not parent_store.still_live(parent_doc):
            deleted = self.collection.delete_one(self.identity(doc)).deleted_count
            if counted:
                self.quotas.freed(org_id, self.quota_kind, deleted)
            raise refused
        self.publish(doc["_id"], doc.get(OUTBOX))

    @staticmethod
    def audit_new(principal):
        now = now_rfc3339()
        return {"created_by": principal, "created_on": now,
                "last_modified_by": principal, "last_modified_on": now}

    immutable_fields = ()  # fields a change may repeat but not alter (the key among them)
    computed_fields = ()  # fields to_api works out when read, never stored

    def update(self, key, changes, principal, scope=None, revisions=None, under=None):
        """Apply a merge patch. Immutable fields must keep their value; with
        `revisions` (If-Match), the record must be at one of them; `under`:
        the record is a nested child of the parent it names. Each round
        reads the record, checks it and the merged result, and writes only if
        the record is still at the revision it read (else reads again)."""
        immutable = {f: changes[f] for f in self.immutable_fields if f in changes}
        changes = {f: v for f, v in changes.items() if f not in immutable}
        sets, unsets = {}, {}
        for field, value in changes.items():
            _merge_patch(field, value, sets, unsets)
        for _ in range(UPDATE_ATTEMPTS):
            current = self.get_doc(key, scope, under=under)
            if revisions is not None and current.get(REVISION) not in revisions:
                raise StaleRevision(f"The {self.kind} has changed since that ETag; "
                                    "read it again.")
            for field, value in immutable.items():
                if current.get(self.stored_name(field)) != value:
                    raise ImmutableField(field, self.kind, value)
            if not sets and not unsets:
                return self.to_api(current)
            merged = _merged(current, sets, unsets)
            derived = self.derived_fields(merged, sets)
            merged.update(derived)
            self.check_merged(merged)
            # a write that changes no field is still made (a new revision: an
            # If-Match race has one winner), but is no event
            changes = changes_between(self.to_api(current), self.to_api(merged),
                                      self.computed_fields)
            written = {**sets, **derived, "last_modified_by": principal,
                       "last_modified_on": now_rfc3339(),
                       REVISION: new_revision()}
            # the order keys of the record as written, from the very revision read
            after = _merged(current, written, unsets)
            written.update(self.order_fields(after))
            if self.events is not None and changes is not None:
                outboxed = self.with_event(
                    {**after, **self.order_fields(after)}, "updated",
                    f"{self.event_kind}:{current['_id']}:{written[REVISION]}", changes)
                written.update({OUTBOX: outboxed[OUTBOX], OUTBOX_SINCE: outboxed[OUTBOX_SINCE]})
            update = {"$set": written, **({"$unset": unsets} if unsets else {})}
            doc = self.collection.find_one_and_update(
                all_of(self.identity(current), {REVISION: current.get(REVISION)}, LIVE), update,
                return_document=ReturnDocument.AFTER)
            if doc is not None:
                self.publish(doc["_id"], doc.get(OUTBOX))
                return self.to_api(doc)
        raise Contended(f"The {self.kind} is being changed by others too often; retry.")

    def derived_fields(self, doc, sets):
        """{stored field: value} of the fields a record keeps worked out from
        its others, for `doc` as a change (`sets`) leaves it; none here."""
        return {}

    def check_merged(self, doc):
        """Rules about a whole record after a change; InvalidRecord if broken."""
        size = len(orjson.dumps(doc, default=str))
        if size > MAX_RECORD_BYTES:
            raise InvalidRecord(None, f"The {self.kind} would be {size} bytes; at most "
                                f"{MAX_RECORD_BYTES} are kept.")

    # -- deletes ----------------------------------------------------------

    children = ()  # the ResourceStores of the records below this one, set by Store

    def configure(self, settings):
        """Take this store's settings from the store's (a dict); most have none."""

    def _blocking_children(self):
        # a child that does not refuse its parent's delete (tokens) just goes with it
        return [child for child in self.children if child.spec.refuses_parent_delete]

    def has_children(self, parent):
        return self._first_child_kind(parent) is not None

    def _first_child_kind(self, parent):
        for child in self._blocking_children():
            if child.has_records_under(parent):
                return child.kind
        return None

    def parent_value(self, parent):
        """What this resource's `parent_field` holds of `parent` (a stored document)."""
        return parent["_id"] if self.spec.parent_holds == "key" else parent["id"]

    def has_records_under(self, parent):
        """Whether a record of this resource belongs to `parent` (a stored document)."""
        return self.collection.find_one({self.spec.parent_field: self.parent_value(parent)},
                                        {"_id": 1}) is not None

    def delete_under(self, parents):
        """Delete every record of this resource below `parents` (stored
        documents), and everything below them."""
        self.delete_where({self.spec.parent_field: {
            "$in": [self.parent_value(parent) for parent in parents]}})

    def organization_of_new(self, requested, scope):
        """The organization a new record of a caller confined to `scope` (or
        not) belongs to: the one `requested` (None: every organization's) if
        the caller may make it there."""
        if scope is None:
            return requested
        if requested not in (None, scope):
            raise NotAllowed(f"A token scoped to one organization can only make "
                             f"{self.kind}s for that organization.")
        return scope

    def insert_in_organization(self, doc, org):
        """Insert `doc`, which belongs to organization `org` (None: to none):
        made like any child record, it cannot outlive its organization and
        counts against its quota."""
        if org is None:
            return self.insert(doc)
        parent = self.organizations.live_parent(org)
        self.insert_under(doc, self.organizations, parent, InvalidReference(
            "organization", "The organization was deleted meanwhile.", org), org_id=org)

    def delete(self, key, force=False, scope=None, revisions=None, under=None):
        """Delete the record at `key` (`under`: a nested child of the parent
        it names); with children, only when `force`d; with `revisions`
        (If-Match), only if it is still at one of them. A record marked by
        an interrupted delete is finished."""
        doc = self.collection.find_one(self.match(key, scope, live=False, under=under),
                                       _CASCADED)
        if doc is None:
            raise NotFound(self._not_found(key, under))
        if doc.get(DELETING):
            return self.finish_delete(doc, force)
        guard = {"_id": doc["_id"]}
        if revisions is not None:
            guard[REVISION] = {"$in": revisions}
        if not force:
            self._refuse_with_children(doc)
        # Matching the revision in the mark makes the If-Match check and the
        # delete's first write one atomic operation.
        if self.mark_deleting(guard, forced=force) == 0:
            current = self.collection.find_one({"_id": doc["_id"]}, _CASCADED)
            if current is not None and current.get(DELETING):
                return self.finish_delete(current, force)  # another delete got there first
            if revisions is not None and current is not None:
                raise StaleRevision(f"The {self.kind} has changed since that ETag; "
                                    "read it again.")
            raise NotFound(self._not_found(key, under))
        if not force:
            try:  # a child may have been created between the check and the mark
                self._refuse_with_children(doc)
            except HasChildren:
                self._unmark(doc["_id"])
                raise
        self._remove_marked([doc])

    def finish_delete(self, doc, force=False):
        """Finish the delete that marked `doc` (a repeated DELETE, or the
        sweep of interrupted ones). A record a forced delete marked is
        finished as forced, whoever repeats it: its subtree is already
        partly gone. Without force, a record that has children is restored
        (the step the interrupted delete would have taken) and the answer is 409."""
        if not force and doc.get(DELETING) != FORCED and self.has_children(doc):
            self._unmark(doc["_id"])
            self._refuse_with_children(doc)
        self._remove_marked([doc])

    def _unmark(self, stored_key):
        # only an unforced delete's mark: a forced delete is never undone
        self.collection.update_one({"_id": stored_key, DELETING: True},
                                   {"$unset": {DELETING: ""}})

    def _refuse_with_children(self, doc):
        kind = self._first_child_kind(doc)
        if kind is not None:
            raise HasChildren(f"The {self.kind} {doc['_id']!r} has {kind}s; "
                              "delete them first or pass force=true.")

    def delete_where(self, query):
        """Delete the records matching `query` and everything below them (a
        forced delete's cascade), CASCADE_BATCH records at a time: each
        batch is marked, its children deleted, its records' `deleted`
        events written and the records removed, before the next is read.
        Every write is of one batch's size, so none holds the store long,
        and the embedded store lets other requests run between them (its
        lock's turns). A process that dies midway leaves marked records,
        which `finish_delete` completes."""
        while True:
            docs = self.collection.find(query, _CASCADED, limit=CASCADE_BATCH)
            if not docs:
                return
            self.mark_deleting({"_id": {"$in": [doc["_id"] for doc in docs]}}, forced=True)
            self._remove_marked(docs)

    def _remove_marked(self, docs):
        """Remove marked records (stored documents with `_CASCADED`'s
        fields): their children first, then each record's `deleted` event,
        then the records; what they counted against their organizations'
        quotas is freed."""
        for child in self.children:
            child.delete_under(docs)
        keys = [doc["_id"] for doc in docs]
        marked = {"_id": keys[0] if len(keys) == 1 else {"$in": keys}, DELETING: {"$exists": True}}
        if self.events is not None and self.removal_events:
            for doc in self.collection.find(marked):
                self._record_removal(doc)
        if self.quota_kind is None:
            self.collection.delete_many(marked)
            return
        by_org = {}
        for doc in docs:
            by_org.setdefault(doc.get("organization"), []).append(doc["_id"])
        for org_id, org_keys in by_org.items():
            # what this delete removed, not what it found: two deleters of
            # one record free it once
            deleted = self.collection.delete_many(
                {"_id": org_keys[0] if len(org_keys) == 1 else {"$in": org_keys},
                 DELETING: {"$exists": True}})
            if org_id is not None:
                self.quotas.freed(org_id, self.quota_kind, deleted.deleted_count)

    def _record_removal(self, doc):
        """Write the `deleted` event of a marked record whose children are
        gone (once: a repeated delete finds it there), and publish its
        pending events before the record goes with its outbox."""
        key = f"{self.event_kind}:{doc['_id']}:{doc.get(REVISION)}:deleted"
        while doc is not None and all(event["key"] != key for event in doc.get(OUTBOX) or []):
            outboxed = self.with_event(doc, "deleted", key)
            # conditional on the outbox read: the sweeper may be emptying it
            if self.collection.update_one(
                    {"_id": doc["_id"], DELETING: {"$exists": True}, OUTBOX: doc.get(OUTBOX)},
                    {"$set": {OUTBOX: outboxed[OUTBOX], OUTBOX_SINCE: outboxed[OUTBOX_SINCE]}}
                    ).matched_count:
                break
            doc = self.collection.find_one({"_id": doc["_id"], DELETING: {"$exists": True}})
        if doc is not None:
            self.publish(doc["_id"])

    def marked(self, shared):
        """The records a delete has marked and not yet removed (with
        `_CASCADED`'s fields). `shared` (MongoDB): the sparse index on the
        mark serves the query; else the embedded store's one pass over its
        documents (mongomock's matcher would take a second at 100k)."""
        if shared:
            return self.collection.find({DELETING: {"$exists": True}}, _CASCADED)
        keys = self.collection.keys_having(DELETING)
        return self.collection.find({"_id": {"$in": keys}}, _CASCADED) if keys else []

    def mark_deleting(self, query, forced=False):
        """Mark the live records matching `query` (`forced`: by a forced
        delete or its cascade); how many were marked."""
        return self.collection.update_many({**query, **LIVE},
                                           {"$set": {DELETING: FORCED if forced else True}}
                                           ).modified_count
