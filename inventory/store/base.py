"""What every resource collection shares: key mapping, pages, inserts,
partial updates, and the deletion mark that keeps children from being orphaned.

Orphans, without transactions
-----------------------------
MongoDB guarantees atomic single-document writes; nothing here relies on
more. Deletes and creates follow one protocol:

* A delete first marks the parent (`_deleting`), then deletes the children,
  then the parent. Marked records are invisible to reads.
* A create inserts the child first, then checks that the parent is still
  there and unmarked; if not, it deletes what it inserted and fails.

Either the child was inserted before the deleter's sweep (the sweep removes
it), or the creator's check runs after the mark (the creator removes it).
An interrupted delete leaves a marked parent that a repeated DELETE finishes.
"""
import secrets
from dataclasses import dataclass

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from inventory.errors import Conflict, Duplicate, NotFound, PreconditionFailed, Unprocessable
from inventory.ids import now_rfc3339
from inventory.store.query import FilterCompiler

DELETING = "_deleting"
LIVE = {DELETING: {"$exists": False}}
REVISION = "_rev"  # changes with every write: the record's ETag


def new_revision():
    return secrets.token_hex(8)


class Record(dict):
    """A record as the API shows it, with the revision its ETag is made of."""

    revision = None


@dataclass
class Page:
    records: list
    next_after: str | None  # the last key of this page when another page follows


def all_of(*clauses):
    """One query matching all `clauses`: a plain document when their keys
    (fields, or top-level operators such as `$or`) are distinct, else `$and`.
    Both mean the same to MongoDB; the plain one is much cheaper for the
    embedded store to evaluate."""
    clauses = [clause for clause in clauses if clause]
    merged = {}
    for clause in clauses:
        if any(key in merged for key in clause):
            return {"$and": clauses}
        merged.update(clause)
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

    collection_name = None
    kind = None  # the resource's name in messages
    key_field = None
    filter_fields = {}  # API field -> type, for `inventory.store.query`

    def __init__(self, db):
        self.collection = db[self.collection_name]
        self.filter_compiler = FilterCompiler(self.filter_fields, self.stored_name)

    # -- mapping between API records and stored documents -----------------

    def to_api(self, doc):
        record = Record({self.key_field: doc["_id"]})
        # fields starting with "_" are the store's own (`_id`, marks, sort keys)
        record.update((k, v) for k, v in doc.items() if not k.startswith("_"))
        record.revision = doc.get(REVISION)
        return record

    def stored_name(self, field):
        return "_id" if field == self.key_field else field

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

    def match(self, key, scope=None):
        """The live record at `key`, if the scope reaches it."""
        # all_of, not a merged dict: a scope on `_id` must not replace the key
        return all_of(self.key_filter(key), LIVE, self.scope_filter(scope))

    # -- reads ------------------------------------------------------------

    def find(self, key, scope=None):
        doc = self.collection.find_one(self.match(key, scope))
        return doc and self.to_api(doc)

    def get(self, key, scope=None):
        record = self.find(key, scope)
        if record is None:
            raise NotFound(f"No {self.kind} {key!r}.")
        return record

    def is_live(self, key, scope=None):
        return self.collection.find_one(self.match(key, scope), {"_id": 1}) is not None

    def list(self, tree, after, limit, scope=None):
        """A page of records matching the parsed filter `tree` (None: all)."""
        return self.find_page(self.compile_filter(tree), after, limit,
                              scope_query=self.scope_filter(scope))

    def compile_filter(self, tree):
        return self.filter_compiler.compile(tree) if tree is not None else {}

    def find_page(self, query, after, limit, lower=None, upper=None, scope_query=None):
        """One page in `_id` order: an index range, `limit + 1` read to learn
        whether another page follows. Never a skip, never a count."""
        bounds = {}
        start = max((k for k in (after, lower) if k is not None), default=None)
        if start is not None:
            bounds["$gt"] = start
        if upper is not None:
            bounds["$lt"] = upper
        query = all_of(scope_query, query, {"_id": bounds} if bounds else None, LIVE)
        docs = list(self.collection.find(query, sort=[("_id", 1)], limit=limit + 1))
        more = len(docs) > limit
        docs = docs[:limit]
        return Page([self.to_api(d) for d in docs], docs[-1]["_id"] if more else None)

    # -- writes -----------------------------------------------------------

    def insert(self, doc):
        doc.setdefault(REVISION, new_revision())
        try:
            self.collection.insert_one(doc)
        except DuplicateKeyError:
            raise Duplicate(f"A {self.kind} {doc['_id']!r} exists already.") from None

    def insert_under(self, doc, parent_store, parent_key, refused):
        """Insert `doc`, then undo it if its parent went away meanwhile."""
        self.insert(doc)
        if not parent_store.is_live(parent_key):
            self.collection.delete_one({"_id": doc["_id"]})
            raise refused

    @staticmethod
    def audit_new(principal):
        now = now_rfc3339()
        return {"created_by": principal, "created_on": now,
                "last_modified_by": principal, "last_modified_on": now}

    def update(self, key, changes, principal, immutable=None, scope=None, revisions=None):
        """Apply a merge patch atomically. `immutable` fields must keep their
        value; with `revisions` (If-Match), the record must still be at one of
        them: the check and the write are one operation."""
        immutable = {self.stored_name(f): v for f, v in (immutable or {}).items()}
        conditions = dict(immutable)
        if revisions is not None:
            conditions[REVISION] = {"$in": revisions}
        match = all_of(self.match(key, scope), conditions)
        sets, unsets = {}, {}
        for field, value in changes.items():
            _merge_patch(field, value, sets, unsets)
        if not sets and not unsets:
            doc = self.collection.find_one(match)
        else:
            sets.update(last_modified_by=principal, last_modified_on=now_rfc3339())
            sets[REVISION] = new_revision()
            update = {"$set": sets, **({"$unset": unsets} if unsets else {})}
            doc = self.collection.find_one_and_update(match, update,
                                                      return_document=ReturnDocument.AFTER)
        if doc is None:
            self._explain_update_miss(key, immutable, scope, revisions)
        return self.to_api(doc)

    def _explain_update_miss(self, key, immutable, scope, revisions):
        current = self.collection.find_one(self.match(key, scope))
        if current is None:
            raise NotFound(f"No {self.kind} {key!r}.")
        if revisions is not None and current.get(REVISION) not in revisions:
            raise PreconditionFailed(f"The {self.kind} has changed since that ETag; "
                                     "read it again.")
        for stored, value in immutable.items():
            if current.get(stored) != value:
                field = self.key_field if stored == "_id" else stored
                raise Unprocessable(f"body.{field}", f"The {field} of a {self.kind} "
                                    "cannot be changed.", value)
        raise NotFound(f"No {self.kind} {key!r}.")  # it changed under us

    # -- deletes ----------------------------------------------------------

    children = None     # the ResourceStore of the records below this one
    child_field = None  # the field of a child that holds this record's `_id`

    def has_children(self, stored_key):
        return self.children is not None and self.children.collection.find_one(
            {self.child_field: stored_key}, {"_id": 1}) is not None

    def delete(self, key, force=False, scope=None, revisions=None):
        """Delete the record at `key`; with children, only when `force`d; with
        `revisions` (If-Match), only if it is still at one of them."""
        doc = self.collection.find_one(self.match(key, scope), {"_id": 1, REVISION: 1})
        if doc is None:
            raise NotFound(f"No {self.kind} {key!r}.")
        stored_key = doc["_id"]
        guard = {"_id": stored_key}
        if revisions is not None:
            guard[REVISION] = {"$in": revisions}
        if not force:
            self._refuse_with_children(stored_key)
        # Matching the revision in the mark makes the If-Match check and the
        # delete's first write one atomic operation.
        if self.mark_deleting(guard) == 0:
            if revisions is not None and self.is_live(stored_key):
                raise PreconditionFailed(f"The {self.kind} has changed since that ETag; "
                                         "read it again.")
            raise NotFound(f"No {self.kind} {key!r}.")
        if not force:
            try:  # a child may have been created between the check and the mark
                self._refuse_with_children(stored_key)
            except Conflict:
                self.collection.update_one({"_id": stored_key}, {"$unset": {DELETING: ""}})
                raise
        self.delete_where({"_id": stored_key})

    def _refuse_with_children(self, stored_key):
        if self.has_children(stored_key):
            raise Conflict(f"The {self.kind} {stored_key!r} has {self.children.kind}s; "
                           "delete them first or pass force=true.")

    def delete_where(self, query):
        """Delete the matching records and everything below them."""
        self.mark_deleting(query)
        if self.children is not None:
            self.delete_children(list(self.collection.find(query, {"_id": 1, "id": 1})))
        self.collection.delete_many({**query, DELETING: True})

    def delete_children(self, docs):
        if docs:
            self.children.delete_where({self.child_field: {"$in": [d["_id"] for d in docs]}})

    def mark_deleting(self, query):
        """Mark the live records matching `query`; how many were marked."""
        return self.collection.update_many({**query, **LIVE},
                                           {"$set": {DELETING: True}}).modified_count
