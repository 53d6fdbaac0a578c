"""A record as the API shows it, and the stored document that holds it: the
API's fields, and the store's own (`_id`, the revision, the delete mark, all
starting with "_"), which never leave the store.

`RecordMapping` is the part of a resource store (inventory.store.base) that
maps between the two: a record read from its document (`to_api`), and the
stored names and queries of a record's key."""
import secrets
from datetime import datetime, timezone

from inventory.store.pages import all_of

DELETING = "_deleting"  # True: marked by a delete; FORCED: by a forced one or its cascade
FORCED = "forced"
LIVE = {DELETING: {"$exists": False}}  # not marked by a delete
REVISION = "_rev"  # changes with every write: the record's ETag

# immutable: a record shares them with the stored document (datetime: the audit times)
_SCALARS = frozenset({str, int, float, bool, type(None), datetime})


def copied(value):
    """A copy of a stored value's objects and arrays as dicts and lists
    (anything else in a stored document is immutable)."""
    kind = value.__class__
    if kind is dict:  # most are flat (labels, `observed`): copied in C, then what nests
        copy = value.copy()
        for k, v in value.items():
            if v.__class__ not in _SCALARS:
                copy[k] = copied(v)
        return copy
    if kind is list or kind is tuple:
        return [v if v.__class__ in _SCALARS else copied(v) for v in value]
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [copied(v) for v in value]
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


def stored_now():
    """Now, as stored: a naive UTC datetime (what pymongo hands back, and
    what TTL indexes read as UTC), to the millisecond (BSON's precision)."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


class Record(dict):
    """A record as the API shows it, with the revision its ETag is made of."""

    revision = None


class RecordMapping:
    """Between a resource's records and its stored documents: the record a
    document shows, and where a record's key is stored. A nested child
    addressed by its key (`keyed_under_parent`) is stored under an `_id`
    that holds its parent's too (`child_id`), its key a field of its own."""

    key_field = None  # the API field whose value is the stored `_id` (but see above)
    read_defaults = {}  # API field -> what a record without it shows
    keyed_under_parent = False

    @property
    def address_field(self):
        """The API field whose value addresses a record in a path."""
        return self.key_field

    def to_api(self, doc):
        """The record `doc` holds, as the API shows it. `doc` may be the
        stored document itself (`shown`): the record's objects and arrays are
        copies, made in the same walk, so no caller can change the store
        through it."""
        record = Record({self.key_field: doc["_id"]})
        for k in _shown_fields(doc):
            v = doc[k]
            record[k] = v if v.__class__ in _SCALARS else copied(v)
        for name, value in self.read_defaults.items():
            record.setdefault(name, value)
        record.revision = doc.get(REVISION)
        return record

    def to_answer(self, doc):
        """The record `doc` holds, for a JSON answer that embeds it as it is:
        as `to_api`'s, but a field the store keeps as JSON text may be that
        text (inventory.store.stored_json). Read for pages `answered`."""
        return self.to_api(doc)

    def stored_name(self, field):
        return "_id" if field == self.key_field and not self.keyed_under_parent else field

    @staticmethod
    def child_id(under, key):
        """The stored `_id` of a nested child's record at `key` under the
        parent that `under` (its `parent_value`) names: two parents may each
        have a child of that key, and the `_id` index keeps it unique within
        one (for ordering by key, a parent's children share the prefix)."""
        return f"{under}/{key}"

    def key_filter(self, key):
        """The query that finds the record addressed by `key` in a path."""
        return {"_id": key}

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

    def still_live(self, doc):
        """Whether the record `doc` was read from is still there and unmarked."""
        return self.collection.find_one(all_of(self.identity(doc), LIVE), {"_id": 1}) is not None
