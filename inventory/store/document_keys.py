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
_ESCAPED = ("%", ".", "$")


def stored_key(key):
    """`key` as a document's field name holds it."""
    if "%" not in key and "." not in key and "$" not in key:
        return key
    # `%` first: the escapes' own `%` are not escaped again
    return key.replace("%", "%25").replace(".", "%2E").replace("$", "%24")


def api_key(stored):
    """The key a stored field name (stored_key's) stands for."""
    if "%" not in stored:
        return stored
    # Every `%` of a stored key starts an escape, so each `%2E` and `%24`
    # found is one; `%25` last, as what it gives back is a `%`.
    return stored.replace("%2E", ".").replace("%24", "$").replace("%25", "%")


def stored_map(mapping):
    """A map of the API with its keys as stored (the same object when none changes)."""
    if not any(_needs_escape(key) for key in mapping):
        return mapping
    return {stored_key(key): value for key, value in mapping.items()}


def api_map(mapping):
    """A stored map with its keys as the API shows them (the same object when none changes)."""
    if "%" not in "".join(mapping):  # one C call: a list page reads this per record
        return mapping
    return {api_key(key): value for key, value in mapping.items()}


def stored_document(value):
    """`value` with the keys of all its objects, at any depth, as stored:
    for what holds whole records (an event's `object`). `value` itself
    when no key needs an escape (the common case: no copy is made)."""
    return _rekeyed(value, stored_key) if _any_key(value, _needs_escape) else value


def api_document(value):
    """The inverse of stored_document (a copy: for what is known to hold
    escaped keys, as the feed marks its events)."""
    return _rekeyed(value, api_key)


def _any_key(value, test):
    if isinstance(value, dict):
        return any(test(key) or _any_key(inner, test) for key, inner in value.items())
    if isinstance(value, list):
        return any(_any_key(inner, test) for inner in value)
    return False


def _rekeyed(value, rekey):
    if type(value) is dict:
        return {rekey(key): inner if inner.__class__ in _SCALARS else _rekeyed(inner, rekey)
                for key, inner in value.items()}
    if type(value) is list:
        return [inner if inner.__class__ in _SCALARS else _rekeyed(inner, rekey)
                for inner in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _holds_escape(key):
    return "%" in key


def _needs_escape(key):
    return any(char in key for char in _ESCAPED)
