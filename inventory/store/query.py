"""Compiles a parsed filter (`inventory.core.filtering`) into a MongoDB query.

Only the operators in `EMITTED_OPERATORS` are ever produced, each from the
tree's structure; a value from the user is only ever a literal operand
(`$eq`, `$lt`, ...), never a key, an operator, a regex or code. A prefix
match (`"Acme*"`) becomes a range (`$gte "Acme"`, `$lt "Acmf"`) rather than
a regex, so there is nothing to escape and the index can serve it.
"""
from datetime import datetime, timezone

from inventory.core.filtering import (
    PRESENT,
    Logical,
    Not,
    duration_back,
    filter_error,
    path_text,
)
from inventory.core.ids import rfc3339
from inventory.core.labels import label_key_problem
from inventory.core.versions import numbers_given, parts_key, version_key, version_parts
from inventory.store.document_keys import stored_key

EMITTED_OPERATORS = frozenset({"$and", "$or", "$nor", "$not", "$eq", "$ne", "$lt", "$lte",
                               "$gt", "$gte", "$exists"})
_RANGE_OPS = {"<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte"}
_INT64 = range(-2 ** 63, 2 ** 63)  # what MongoDB can store and compare as an integer


class _OutOfRange(ValueError):
    """An instant whose offset takes it out of the calendar in UTC."""


def _timestamp(text):
    """An RFC 3339 instant in the stored form (UTC, milliseconds, Z), or
    None; _OutOfRange when it is not in years 1 to 9999 in UTC."""
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if moment.tzinfo is None or "T" not in text.upper():
        return None
    try:
        return rfc3339(moment)
    except OverflowError:  # "0001-01-01T00:00:00+01:00" is in year 0 in UTC
        raise _OutOfRange(text) from None


def _successor(prefix):
    """The least string greater than every string starting with `prefix`."""
    while prefix:
        code = ord(prefix[-1]) + 1
        if code == 0xD800:
            code = 0xE000  # surrogates cannot be stored
        if code <= 0x10FFFF:
            return prefix[:-1] + chr(code)
        prefix = prefix[:-1]
    return None


def _check_label_key(node, key, column):
    problem = label_key_problem(key)
    if problem is not None:
        raise filter_error(f"{key!r} is not a label key: {problem[:1].lower()}"
                           f"{problem[1:].rstrip('.')}", node.text, column)


class FilterCompiler:
    """Compiles trees for one resource: `fields` maps API names to types
    (string, timestamp, integer, version, labels); `stored_name` maps an API
    name to its stored path; `computed` maps a field worked out when read
    (a cluster's `support.status`) to the function, in its resource's
    folder, that compiles a comparison of it into a query of stored fields."""

    def __init__(self, fields, stored_name, computed=None):
        self.fields = fields
        self.stored_name = stored_name
        self.computed = computed or {}

    def compile(self, tree, now=None):
        """The query of `tree`; `now` (RFC 3339, None: this moment) is the
        instant relative times (`"-PT1H"`) are resolved against."""
        if isinstance(tree, Logical):
            return {"$and" if tree.op == "AND" else "$or":
                    [self.compile(operand, now) for operand in tree.operands]}
        if isinstance(tree, Not):
            return {"$nor": [self.compile(tree.operand, now)]}
        return self._comparison(tree, now)

    def _field_type(self, node):
        field = node.field
        if field in self.fields:
            return self.fields[field]
        if self.fields.get(node.path[0]) == "labels":
            self._label_key(node)
            return "string"
        known = ", ".join(sorted(self.fields))
        raise filter_error(f"unknown field {field!r} (fields: {known})", node.text, node.position)

    def _comparison(self, node, now=None):
        kind = self._field_type(node)
        if node.field in self.computed:
            return self.computed[node.field](node)
        if node.value is PRESENT:
            return self._present(node, kind)
        if kind == "labels":
            return self._has_label(node)
        path = self._stored_path(node)
        if node.prefix and node.op not in ("=", "!=", ":"):
            raise filter_error("a prefix (*) works only with =, != and :", node.text, node.position)
        value = self._timestamp_value(node, now) if kind == "timestamp" else \
            getattr(self, f"_{kind}_value")(node)
        if node.prefix:
            low, high = value
            bounds = {"$gte": low, **({"$lt": high} if high is not None else {})}
            return {path: {"$not": bounds}} if node.op == "!=" else {path: bounds}
        if node.op in ("=", ":"):
            return {path: {"$eq": value}}
        if node.op == "!=":
            return {path: {"$ne": value}}
        return {path: {_RANGE_OPS[node.op]: value}}

    def _present(self, node, kind):
        """`field:*`: the field holds a value (a record that lacks it, or
        holds null, does not match; `NOT field:*` finds those). For
        `labels:*`, at least one label."""
        path = self._stored_path(node)
        if kind == "labels":
            return {"$and": [{path: {"$ne": None}}, {path: {"$ne": {}}}]}
        return {path: {"$ne": None}}

    def _has_label(self, node):
        if node.op != ":" or not isinstance(node.value, str) or node.prefix:
            raise filter_error("labels is a map: compare one label (labels.team=\"core\") "
                               "or ask whether it exists (labels:team)", node.text, node.position)
        _check_label_key(node, node.value, node.position)
        return {f"{self.stored_name(node.field)}.{stored_key(node.value)}": {"$exists": True}}

    def _label_key(self, node):
        """The key of `labels.<key>` (`labels."<key>"` when it holds `.` or `/`)."""
        if len(node.path) > 2:  # labels.app.kubernetes.io: nested fields, not a key
            quoted = path_text((node.path[0], ".".join(node.path[1:])))
            raise filter_error(f"{node.field} is not a field: a label key with a `.` or `/` "
                               f"is quoted, as in `{quoted}`", node.text, node.columns[1])
        _check_label_key(node, node.path[1], node.columns[1])
        return node.path[1]

    def _stored_path(self, node):
        """The stored path a comparison's field is read at (a label's key escaped)."""
        if node.field not in self.fields and len(node.path) == 2:
            return f"{self.stored_name(node.path[0])}.{stored_key(self._label_key(node))}"
        return self.stored_name(node.field)

    def _mismatch(self, node, wanted):
        return filter_error(f"{node.field} is {wanted}; {node.value!r} is not",
                            node.text, node.position)

    def _string_value(self, node):
        if not isinstance(node.value, str):
            raise self._mismatch(node, "a string: quote the value")
        return (node.value, _successor(node.value)) if node.prefix else node.value

    def _timestamp_value(self, node, now=None):
        if not isinstance(node.value, str):
            raise self._mismatch(node, "an RFC 3339 timestamp in quotes")
        if node.prefix:  # "2026-11*": the stored form starts the same way
            return node.value, _successor(node.value)
        try:
            back = duration_back(node.value)
        except ValueError as error:
            raise filter_error(str(error), node.text, node.position) from None
        if back is not None:  # "-PT1H": back from `now`
            moment = datetime.fromisoformat(now.replace("Z", "+00:00")) if now else \
                datetime.now(timezone.utc)
            return rfc3339(moment - back)
        try:
            instant = _timestamp(node.value)
        except _OutOfRange:
            raise filter_error(f"{node.field}: {node.value!r} is not an instant of years 1 to "
                               "9999 in UTC", node.text, node.position) from None
        if instant is None:
            raise self._mismatch(node, 'an RFC 3339 timestamp such as "2026-11-01T00:00:00Z", '
                                       'or a time back from now such as "-PT1H" or "-P30D" '
                                       "(a negative ISO 8601 duration in weeks, days, hours, "
                                       "minutes and seconds)")
        return instant

    def _integer_value(self, node):
        if isinstance(node.value, bool) or not isinstance(node.value, int):
            raise self._mismatch(node, "an integer")
        if node.value not in _INT64:
            raise self._mismatch(node, "an integer of at most 64 bits")
        return node.value

    def _version_value(self, node):
        parts = version_parts(node.value)
        if parts is None:
            raise self._mismatch(node, 'a version in quotes, such as "1.31" or "v1.31.2"')
        if node.prefix:  # "1.31*": every 1.31.x
            given, suffixed = numbers_given(node.value)
            if suffixed:  # versions compare by their numbers: a prefix ends on one
                raise filter_error(
                    "a version prefix (*) matches by major, minor and patch, and version "
                    "suffixes are ignored in comparisons, so it cannot follow a suffix: "
                    'write "1.31*" for every 1.31.x', node.text, node.position)
            upper = list(parts[:given])
            upper[-1] += 1
            return version_key(node.value), parts_key(upper + [0] * (3 - given))
        return version_key(node.value)


_ABSENT = object()  # a path a row lacks (the document had no value there)
_ROW_RANGES = {"$lt": str.__lt__, "$lte": str.__le__, "$gt": str.__gt__, "$gte": str.__ge__}


class RowTest:
    """Whether a row of stored values matches a compiled query, as MongoDB
    would match the document the row was read from: `row` maps each path the
    query reads (`paths`) to the document's value there, a string or null,
    and lacks a path the document lacks. Made by `row_test`."""

    def __init__(self, check, paths):
        self._check, self.paths = check, frozenset(paths)

    def __call__(self, row):
        return self._check(row)


def row_test(query):
    """A RowTest of `query`, for the queries FilterCompiler makes of
    fields compared with strings or null (`$eq`, `$ne`, ranges, `$not`,
    joined by `$and`, `$or`, `$nor`); None for any other query (`$exists`
    among them: a grouped row may not tell a missing value from null on
    every server). The caller hands it rows whose values are strings or
    null only: arrays, numbers and objects have MongoDB's own rules."""
    paths = set()
    check = _row_check(query, paths)
    return None if check is None else RowTest(check, paths)


def _row_check(query, paths):
    if not isinstance(query, dict):
        return None
    checks = []
    for key, condition in query.items():
        if key in ("$and", "$or", "$nor"):
            if not isinstance(condition, list) or not condition:
                return None
            parts = [_row_check(part, paths) for part in condition]
            if any(part is None for part in parts):
                return None
            joined = {"$and": all, "$or": any, "$nor": lambda tests: not any(tests)}[key]
            checks.append(lambda row, parts=parts, joined=joined:
                          joined(part(row) for part in parts))
        elif key.startswith("$"):
            return None
        else:
            test = _value_test(condition)
            if test is None:
                return None
            paths.add(key)
            checks.append(lambda row, key=key, test=test: test(row.get(key, _ABSENT)))
    if not checks:
        return None
    return checks[0] if len(checks) == 1 else lambda row: all(check(row) for check in checks)


def _value_test(condition):
    """A test of one value (a string, None, or _ABSENT) against a path's
    condition (`{"$eq": v, ...}`, or a literal), or None."""
    if not isinstance(condition, dict):
        condition = {"$eq": condition}
    tests = []
    for operator, operand in condition.items():
        if operator in ("$eq", "$ne"):
            if operand is None:  # null matches null and a missing value
                test = lambda value: value is None or value is _ABSENT  # noqa: E731
            elif isinstance(operand, str):
                test = lambda value, operand=operand: value == operand  # noqa: E731
            else:
                return None
            tests.append(test if operator == "$eq" else
                         lambda value, test=test: not test(value))
        elif operator in _ROW_RANGES and isinstance(operand, str):
            compare = _ROW_RANGES[operator]
            # a string compares with strings only (MongoDB's type brackets)
            tests.append(lambda value, compare=compare, operand=operand:
                         value.__class__ is str and compare(value, operand))
        elif operator == "$not":
            inner = _value_test(operand) if isinstance(operand, dict) else None
            if inner is None:
                return None
            tests.append(lambda value, inner=inner: not inner(value))
        else:
            return None
    if not tests:
        return None
    return tests[0] if len(tests) == 1 else lambda value: all(test(value) for test in tests)
