"""Keys of a map the API shows (a cluster's label keys, `app.kubernetes.io/name`)
as they are stored: a document's field name cannot hold them as they are.

MongoDB reads a `.` in a field name as nesting (in queries, updates and
`$group`), and refuses a leading `$`; FerretDB refuses a `.` in any key
outright. So those characters are escaped, and the escape character
itself: `%` as `%25`, `.` as `%2E`, `$` as `%24` (percent-encoding's
spelling). The encoding is reversible and unambiguous, and it changes no
key without those three characters: every key the service stored before
label keys could hold a `.` (letters, digits, `-`, `_`) is stored exactly
as it was, so old records are read, filtered and grouped with no
migration. `/` needs no escape and is stored as is.

Every path that reads or writes such keys goes through here: the clusters'
store (records, merge patches, `group_by`), the filter compiler
(`labels.<key>`, `labels:<key>`) and the feed (an event's `object` and its
changes' values).
"""
import re

_ESCAPED = ("%", ".", "$")
_ESCAPES = {"%": "%25", ".": "%2E", "$": "%24"}
_UNESCAPES = {code: char for char, code in _ESCAPES.items()}
_ESCAPE_RE = re.compile(r"[%.$]")
_UNESCAPE_RE = re.compile(r"%(?:25|2E|24)")


def stored_key(key):
    """`key` as a document's field name holds it."""
    if "%" not in key and "." not in key and "$" not in key:
        return key
    return _ESCAPE_RE.sub(lambda match: _ESCAPES[match.group()], key)


def api_key(stored):
    """The key a stored field name (stored_key's) stands for."""
    if "%" not in stored:
        return stored
    return _UNESCAPE_RE.sub(lambda match: _UNESCAPES[match.group()], stored)


def stored_map(mapping):
    """A map of the API with its keys as stored (the same object when none changes)."""
    if not any(_needs_escape(key) for key in mapping):
        return mapping
    return {stored_key(key): value for key, value in mapping.items()}


def api_map(mapping):
    """A stored map with its keys as the API shows them (the same object when none changes)."""
    if not any(_holds_escape(key) for key in mapping):
        return mapping
    return {api_key(key): value for key, value in mapping.items()}


def stored_document(value):
    """`value` with the keys of all its objects, at any depth, as stored:
    for what holds whole records (an event's `object`). `value` itself
    when no key needs an escape (the common case: no copy is made)."""
    return _rekeyed(value, stored_key) if _any_key(value, _needs_escape) else value


def api_document(value):
    """The inverse of stored_document (`value` itself when no key is escaped)."""
    return _rekeyed(value, api_key) if _any_key(value, _holds_escape) else value


def _any_key(value, test):
    if isinstance(value, dict):
        return any(test(key) or _any_key(inner, test) for key, inner in value.items())
    if isinstance(value, list):
        return any(_any_key(inner, test) for inner in value)
    return False


def _rekeyed(value, rekey):
    if isinstance(value, dict):
        return {rekey(key): _rekeyed(inner, rekey) for key, inner in value.items()}
    if isinstance(value, list):
        return [_rekeyed(inner, rekey) for inner in value]
    return value


def _holds_escape(key):
    return "%" in key


def _needs_escape(key):
    return any(char in key for char in _ESCAPED)
