"""Compiles a parsed filter (`inventory.core.filtering`) into a MongoDB query.

Only the operators in `EMITTED_OPERATORS` are ever produced, each from the
tree's structure; a value from the user is only ever a literal operand
(`$eq`, `$lt`, ...), never a key, an operator, a regex or code. A prefix
match (`"Acme*"`) becomes a range (`$gte "Acme"`, `$lt "Acmf"`) rather than
a regex, so there is nothing to escape and the index can serve it.
"""
import operator
import re
from datetime import date, datetime, timedelta, timezone

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

# A cluster's distribution (inventory.core.lifecycle) and version key, kept beside
# its fields: `support.status` compiles into ranges of the one per the other.
from inventory.core.lifecycle import (  # noqa: F401 (re-exported)
    DISTRIBUTION_FIELD,
    DISTRIBUTIONS,
    LIFECYCLES,
    STATUSES,
    VERSION_KEY_FIELD,
    today,
)
from inventory.core.versions import numbers_given, parts_key, version_key, version_parts
from inventory.store.document_keys import stored_key

EMITTED_OPERATORS = frozenset({"$and", "$or", "$nor", "$not", "$eq", "$ne", "$lt", "$lte",
                               "$gt", "$gte", "$exists"})
_RANGE_OPS = {"<": "$lt", "<=": "$lte", ">": "$gt", ">=": "$gte"}
_INT64 = range(-2 ** 63, 2 ** 63)  # what MongoDB can store and compare as an integer

_NOTHING = {"_id": {"$exists": False}}  # every document has an `_id`


def _timestamp(text):
    """An RFC 3339 instant in the stored form (UTC, milliseconds, Z), or None."""
    try:
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        return None
    if moment.tzinfo is None or "T" not in text.upper():
        return None
    return rfc3339(moment)


_DAY_COMPARE = {"=": operator.eq, "<": operator.lt, "<=": operator.le, ">": operator.gt,
                ">=": operator.ge}
_DAYS_FROM_TODAY = re.compile(r"^([+-])P(?!$)(?:(\d{1,5})W)?(?:(\d{1,5})D)?$")


def _day_value(node):
    """The day a support date is compared with: `"2027-01-31"`, or a signed
    ISO 8601 duration in weeks and days from today (`"+P60D"`, `"-P1W"`)."""
    if isinstance(node.value, str):
        relative = _DAYS_FROM_TODAY.match(node.value)
        if relative is not None:
            sign, weeks, days = relative.groups()
            offset = timedelta(weeks=int(weeks or 0), days=int(days or 0))
            return today() + offset if sign == "+" else today() - offset
        try:
            if len(node.value) == 10:
                return date.fromisoformat(node.value)
        except ValueError:
            pass
    raise filter_error(f"{node.field} is a day: {node.value!r} is not one; write "
                       '"2027-01-31", or "+P60D" for days from today', node.text, node.position)


def _in_version_ranges(ranges_of):
    """The query of the clusters whose version key lies in one of
    `ranges_of(distribution)` for their distribution (what the computed
    support fields compile into: an index serves it)."""
    clauses = []
    for distribution in DISTRIBUTIONS:
        for low, high in ranges_of(distribution):
            bounds = {op: key for op, key in (("$gte", low), ("$lt", high)) if key}
            clauses.append({DISTRIBUTION_FIELD: {"$eq": distribution},
                            **({VERSION_KEY_FIELD: bounds} if bounds else {})})
    if not clauses:
        return _NOTHING
    return clauses[0] if len(clauses) == 1 else {"$or": clauses}


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
    name to its stored path."""

    def __init__(self, fields, stored_name):
        self.fields = fields
        self.stored_name = stored_name

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
        if node.value is PRESENT:
            return self._present(node, kind)
        if kind == "labels":
            return self._has_label(node)
        if kind == "support_status":
            return self._support_status(node)
        if kind == "support_date":
            return self._support_date(node)
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
        if kind == "support_status":
            raise filter_error("support.status is always present; compare it with a status",
                               node.text, node.position)
        if kind == "support_date":
            return self._support_date(node)
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

    def _support_status(self, node):
        """`support.status` is computed for today, so it is compiled for
        today: for each distribution, the ranges of version keys whose
        minor has that status today (inventory.core.lifecycle). The rest of the
        filter, the page's walk and its bound work as for any field."""
        if node.op not in ("=", "!=", ":") or not isinstance(node.value, str):
            raise filter_error("support.status is compared with = or != and a quoted status "
                               f"({', '.join(STATUSES)})", node.text, node.position)
        if node.prefix:
            wanted = {status for status in STATUSES if status.startswith(node.value)}
        elif node.value in STATUSES:
            wanted = {node.value}
        else:
            raise filter_error(f"{node.value!r} is not a support status ("
                               f"{', '.join(STATUSES)})", node.text, node.position)
        if node.op == "!=":
            wanted = set(STATUSES) - wanted
        day = today()
        return _in_version_ranges(
            lambda distribution: LIFECYCLES.version_ranges(distribution, wanted, day))

    def _support_date(self, node):
        """`support.ends_on` and `support.all_ends_on` are computed too (the
        first for today): compiled, per distribution, into the ranges of
        version keys whose minor's date passes the comparison. A version
        without the date (not in the data, or no end announced) compares
        as null: only `!=` and `NOT ...:*` find it."""
        field = node.field.removeprefix("support.")
        if node.value is PRESENT:
            passes = lambda ends: ends is not None  # noqa: E731
        else:
            if node.op == ":" or node.prefix:
                raise filter_error(f"{node.field} compares with = != < <= > >= and a day "
                                   '("2027-01-31", or "+P60D": days from today)',
                                   node.text, node.position)
            wanted = _day_value(node)
            if node.op == "!=":
                passes = lambda ends: ends != wanted  # noqa: E731
            else:
                compare = _DAY_COMPARE[node.op]
                passes = lambda ends: ends is not None and compare(ends, wanted)  # noqa: E731
        day = today()

        def keep(cycle):
            ends = None if cycle is None else (
                cycle.ends_on(day) if field == "ends_on" else cycle.all_ends)
            return passes(ends)
        return _in_version_ranges(
            lambda distribution: LIFECYCLES.version_ranges_where(distribution, keep))

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
        instant = _timestamp(node.value)
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
