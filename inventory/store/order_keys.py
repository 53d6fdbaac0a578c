"""Order keys: for each declared ordering (inventory.core.ordering) a string kept
in every record whose plain string order is the ordering's, ties broken by
the record's key. A page in that ordering is then one range on one indexed
field, walked forwards or backwards, on MongoDB and the embedded store
alike: never a skip, never a sort of the whole collection, and the same
order on both (strings compare byte by byte on each).

The design, and why: docs/design/paging.md"""
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
