"""Creating a record: inserted with its `created` event, under a parent
that must still be live once it is written (else it is undone), counted
against its organization's quota (inventory.store.quotas) by a reservation
made before the insert and settled after it. The protocol, and why:
docs/design/writes-and-deletes.md

`Inserts` is this part of a resource store (inventory.store.base)."""
from pymongo.errors import DuplicateKeyError

from inventory.core.errors import Contended, InvalidReference, KeyInUse, NotAllowed
from inventory.core.ids import now_rfc3339
from inventory.store.outbox import OUTBOX
from inventory.store.records import REVISION, new_revision


class Inserts:
    """A resource's creates."""

    quota_kind = None  # the quota of the owning organization a record counts against
    quotas = None  # inventory.store.quotas.Quotas, set by Store

    @staticmethod
    def audit_new(principal):
        now = now_rfc3339()
        return {"created_by": principal, "created_on": now,
                "last_modified_by": principal, "last_modified_on": now}

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
