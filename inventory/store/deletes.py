"""Deleting a record and what is below it, without transactions: the record
is marked first (`_deleting`), its children are deleted, its `deleted` event
written, then it goes. A forced delete cascades CASCADE_BATCH records at a
time; a process that dies midway leaves marked records, which a repeat or
the finisher (inventory.store.interrupted_deletes) completes as asked.
The protocol, and why: docs/design/writes-and-deletes.md

`Deletes` is this part of a resource store (inventory.store.base)."""
from inventory.core.errors import HasChildren, NotFound, StaleRevision
from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.records import DELETING, FORCED, LIVE, REVISION

# what a delete reads of the records it removes (children are found by `_id` or `id`)
CASCADED = {"_id": 1, "id": 1, "organization": 1, DELETING: 1}
# Records one step of a forced delete removes: each write (a mark, a delete
# of a batch's children) stays small, however large the subtree.
CASCADE_BATCH = 100


class Deletes:
    """A resource's deletes, and its part in its parent's."""

    children = ()  # the ResourceStores of the records below this one, set by Store
    removal_events = True  # whether removing a record is an event (a scan's is not)

    def delete(self, key, force=False, scope=None, revisions=None, under=None):
        """Delete the record at `key` (`under`: a nested child of the parent
        it names); with children, only when `force`d; with `revisions`
        (If-Match), only if it is still at one of them. A record marked by
        an interrupted delete is finished."""
        doc = self.collection.find_one(self.match(key, scope, live=False, under=under),
                                       CASCADED)
        if doc is None:
            raise NotFound(self.not_found(key, under))
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
            current = self.collection.find_one({"_id": doc["_id"]}, CASCADED)
            if current is not None and current.get(DELETING):
                return self.finish_delete(current, force)  # another delete got there first
            if revisions is not None and current is not None:
                raise StaleRevision(f"The {self.kind} has changed since that ETag; "
                                    "read it again.")
            raise NotFound(self.not_found(key, under))
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

    def mark_deleting(self, query, forced=False):
        """Mark the live records matching `query` (`forced`: by a forced
        delete or its cascade); how many were marked."""
        return self.collection.update_many({**query, **LIVE},
                                           {"$set": {DELETING: FORCED if forced else True}}
                                           ).modified_count

    def marked(self, shared):
        """The records a delete has marked and not yet removed (with
        `CASCADED`'s fields). `shared` (MongoDB): the sparse index on the
        mark serves the query; else the embedded store's one pass over its
        documents (mongomock's matcher would take a second at 100k)."""
        if shared:
            return self.collection.find({DELETING: {"$exists": True}}, CASCADED)
        keys = self.collection.keys_having(DELETING)
        return self.collection.find({"_id": {"$in": keys}}, CASCADED) if keys else []

    def _unmark(self, stored_key):
        # only an unforced delete's mark: a forced delete is never undone
        self.collection.update_one({"_id": stored_key, DELETING: True},
                                   {"$unset": {DELETING: ""}})

    # -- children -------------------------------------------------------------

    def has_children(self, parent):
        return self._first_child_kind(parent) is not None

    def _first_child_kind(self, parent):
        # a child that does not refuse its parent's delete (tokens) just goes with it
        for child in self.children:
            if child.spec.refuses_parent_delete and child.has_records_under(parent):
                return child.kind
        return None

    def _refuse_with_children(self, doc):
        kind = self._first_child_kind(doc)
        if kind is not None:
            raise HasChildren(f"The {self.kind} {doc['_id']!r} has {kind}s; "
                              "delete them first or pass force=true.")

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

    # -- the cascade ------------------------------------------------------------

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
            docs = self.collection.find(query, CASCADED, limit=CASCADE_BATCH)
            if not docs:
                return
            self.mark_deleting({"_id": {"$in": [doc["_id"] for doc in docs]}}, forced=True)
            self._remove_marked(docs)

    def _remove_marked(self, docs):
        """Remove marked records (stored documents with `CASCADED`'s
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
