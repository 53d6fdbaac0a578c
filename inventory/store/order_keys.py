"""Order keys: for each declared ordering (inventory.core.ordering) a string kept
in every record whose plain string order is the ordering's, ties broken by
the record's key. A page in that ordering is then one range on one indexed
field, walked forwards or backwards, on MongoDB and the embedded store
alike: never a skip, never a sort of the whole collection, and the same
order on both (strings compare byte by byte on each).

`OrderKeys` is the part of a resource store (inventory.store.base) that
keeps them: which stored field each ordering walks, and the keys a write sets.

The design, and why: docs/design/paging.md"""
from functools import cached_property

from inventory.store.records import REVISION

NULL_FIRST, END_ASCENDING = " ", "!"     # both below "0"
NULL_LAST, END_DESCENDING = "\x7f", "~"  # both above "f"
_INT64 = 1 << 63
# Kinds whose missing value means "none yet, or never": a support date not
# known or not announced sorts after every date, so that what ends soonest
# comes first and what has no end comes last (first with `desc`).
LATEST_WHEN_MISSING = frozenset({"support_date"})


def _value_bytes(value, kind):
    if kind == "integer":
        return (value + _INT64).to_bytes(8, "big")  # ValueError beyond int64
    return value.encode("utf-8")


def component(value, kind, descending):
    """One field's part of an order key."""
    if value is None:
        return NULL_LAST if descending != (kind in LATEST_WHEN_MISSING) else NULL_FIRST
    data = _value_bytes(value, kind)
    if descending:
        return bytes(255 - byte for byte in data).hex() + END_DESCENDING
    return data.hex() + END_ASCENDING


def lookup(doc, path):
    """The value at a dotted `path` of a stored document, or None."""
    for part in path.split("."):
        if not isinstance(doc, dict):
            return None
        doc = doc.get(part)
    return doc


def order_key(doc, parts):
    """The order key of `doc` for parts ((stored path, kind, descending), ...)."""
    return "".join(component(lookup(doc, path), kind, descending)
                   for path, kind, descending in parts) + doc["_id"]


class OrderKeys:
    """Each declared ordering (inventory.core.ordering) is walked on one
    stored field: the key itself when it orders by the key, else an order
    key that every write keeps up to date."""

    orderings = None  # inventory.core.ordering.Orderings of this list
    scope_field = None  # the stored field holding the owning organization's id

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
