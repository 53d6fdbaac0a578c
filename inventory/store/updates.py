"""Changing a record by an RFC 7386 merge patch: each round reads the
record, checks it and the merged result, and writes only if the record is
still at the revision it read (else reads again). No lock and no
transaction: a conditional single-document write, which MongoDB makes atomic.

`MergePatches` is this part of a resource store (inventory.store.base)."""
import orjson
from pymongo import ReturnDocument

from inventory.core.errors import Contended, ImmutableField, InvalidRecord, StaleRevision
from inventory.core.ids import now_rfc3339
from inventory.store.changes import changes_between
from inventory.store.outbox import OUTBOX, OUTBOX_SINCE
from inventory.store.pages import all_of
from inventory.store.records import LIVE, REVISION, new_revision

# Above what the schemas allow a record to grow to: a last guard on the
# merged result of updates.
MAX_RECORD_BYTES = 128 * 1024
UPDATE_ATTEMPTS = 10  # read-check-write rounds before an update gives up (409)


def merged(doc, sets, unsets):
    """`doc` as it will be after `$set`/`$unset` of dotted paths."""
    result = {**doc}
    for path, value in [*sets.items(), *((path, None) for path in unsets)]:
        *parents, last = path.split(".")
        node = result
        for part in parents:
            inner = node.get(part)
            node[part] = dict(inner) if isinstance(inner, dict) else {}
            node = node[part]
        if path in unsets:
            node.pop(last, None)
        else:
            node[last] = value
    return result


def flattened(prefix, value, sets, unsets):
    """Flatten an RFC 7386 merge patch into dotted `$set`/`$unset` paths:
    objects merge key by key (`{}` changes nothing), null removes."""
    if isinstance(value, dict):
        for key, inner in value.items():
            flattened(f"{prefix}.{key}", inner, sets, unsets)
    elif value is None:
        unsets[prefix] = ""
    else:
        sets[prefix] = value


class MergePatches:
    """A resource's updates: the merge patch applied at a revision, the
    rules of the whole record checked before it is written."""

    immutable_fields = ()  # fields a change may repeat but not alter (the key among them)
    computed_fields = ()  # fields to_api works out when read, never stored

    def update(self, key, changes, principal, scope=None, revisions=None, under=None):
        """Apply a merge patch. Immutable fields must keep their value; with
        `revisions` (If-Match), the record must be at one of them; `under`:
        the record is a nested child of the parent it names."""
        immutable = {f: changes[f] for f in self.immutable_fields if f in changes}
        changes = {f: v for f, v in changes.items() if f not in immutable}
        sets, unsets = {}, {}
        for field, value in changes.items():
            flattened(field, value, sets, unsets)
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
            whole = merged(current, sets, unsets)
            derived = self.derived_fields(whole, sets)
            whole.update(derived)
            self.check_merged(whole)
            # a write that changes no field is still made (a new revision: an
            # If-Match race has one winner), but is no event
            changes = changes_between(self.to_api(current), self.to_api(whole),
                                      self.computed_fields)
            written = {**sets, **derived, "last_modified_by": principal,
                       "last_modified_on": now_rfc3339(),
                       REVISION: new_revision()}
            # the order keys of the record as written, from the very revision read
            after = merged(current, written, unsets)
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
