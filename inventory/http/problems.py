"""The error body (RFC 9457 problem details) as plain data, bounded in size.

Shared by the app's error handler (`inventory.core.errors`) and the server layer
(`inventory.server.worker`), which answers before any Flask request exists.
"""
from http import HTTPStatus

import orjson

from inventory.core.caps import MAX_ENTRIES, MAX_VALUE_BYTES

_SHORTENED_TEXT = 200


def _bounded(value):
    """`value` as echoed in an entry: itself when small, else a short stand-in
    that says what it was (the client sent it; it knows the rest)."""
    try:
        size = len(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)[:_SHORTENED_TEXT]
    if size <= MAX_VALUE_BYTES:
        return value
    if isinstance(value, str):
        return value[:_SHORTENED_TEXT] + f"... ({len(value)} characters)"
    if isinstance(value, dict):
        return f"(an object of {len(value)} members)"
    if isinstance(value, list):
        return f"(an array of {len(value)} items)"
    return repr(value)[:_SHORTENED_TEXT]


def bounded_entries(entries):
    """At most MAX_ENTRIES entries, values shortened; a last entry says how
    many more there were."""
    entries = list(entries)
    kept = [dict(entry, value=_bounded(entry.get("value"))) for entry in entries[:MAX_ENTRIES]]
    if len(entries) > MAX_ENTRIES:
        kept.append({"location": kept[-1]["location"].split(".")[0],
                     "message": f"... and {len(entries) - MAX_ENTRIES} more problems "
                                f"(only the first {MAX_ENTRIES} are listed).",
                     "value": None})
    return kept


def problem_body(status, detail, entries, schema_url, instance):
    return {
        "$schema": schema_url,
        "status": status,
        "title": HTTPStatus(status).phrase,
        "detail": detail,
        "type": "about:blank",
        "instance": instance,
        "errors": bounded_entries(entries),
    }
