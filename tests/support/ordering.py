"""The order a list must come in, computed here independently of the
store: what the ordering tests, the race tests and the bench check pages against."""
from datetime import datetime

from inventory.core import ordering
from inventory.core.versions import version_parts

TIMESTAMPS = {"created_on", "last_modified_on"}
# a support date not known or not announced: after every date (never ends)
LATEST_WHEN_MISSING = {"support.ends_on", "support.all_ends_on"}


def value(record, field):
    for part in field.split("."):
        record = record.get(part) if isinstance(record, dict) else None
    if record is None:
        return None
    if field == "version":
        return version_parts(record)
    if field in TIMESTAMPS:
        return datetime.fromisoformat(record.replace("Z", "+00:00"))
    return record


class Reversed:
    """A value that sorts in the opposite order."""

    def __init__(self, inner):
        self.inner = inner

    def __lt__(self, other):
        return other.inner < self.inner

    def __eq__(self, other):
        return self.inner == other.inner


def expected(records, order_by, key_field):
    """`records` in the order `order_by` asks for, sorted here: missing
    values first ascending (last descending), but missing support dates
    last ascending (first descending), ties by the key in the direction of
    the first field."""
    asked = ordering.parse(order_by)
    backwards = asked.fields[0][1]
    canonical = asked.reversed() if backwards else asked

    def sort_key(record):
        parts = []
        for field, descending in canonical.fields:
            found = value(record, field)
            part = (found is not None, found if found is not None else 0)
            if field in LATEST_WHEN_MISSING:
                part = (found is None, found or "")
            parts.append(Reversed(part) if descending else part)
        return (*parts, record[key_field])
    ordered = sorted(records, key=sort_key)
    return ordered[::-1] if backwards else ordered
