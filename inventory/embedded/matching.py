"""Whether a stored document matches a query, decided as mongomock's
matcher decides it, but directly for the queries the store sends most.

This is a third interpreter of the queries a filter compiles into
(`inventory.store.query`), beside MongoDB's and mongomock's: it checks them
against each document the embedded store walks or counts. The
conditions it knows (fields compared with strings or numbers, null,
`$exists`, `$in` of strings, an array read back whole; joined by `$and`,
`$or` and `$nor`) are compiled once into plain Python tests; anything else,
and any document whose value it cannot decide (an array, a mixed type), goes
to mongomock's own matcher, so the answers are the same
(tests/unit/embedded/test_matching.py compares them)."""
import operator

import orjson

from inventory.embedded import mongomock_internals

_ABSENT = object()


def walked_bounds(condition):
    """Whether a condition is only the string bounds a walk applies itself."""
    return isinstance(condition, dict) and len(condition) <= 2 and all(
        operator in ("$gt", "$gte", "$lt", "$lte") and isinstance(value, str)
        for operator, value in condition.items()) and not (
        {"$gt", "$gte"} <= condition.keys() or {"$lt", "$lte"} <= condition.keys())


_COMPARE = {"$eq": operator.eq, "$gt": operator.gt, "$gte": operator.ge,
            "$lt": operator.lt, "$lte": operator.le}


def _conditions(query, walked):
    """[(field, condition)] of a query that is fields and `$and`s of them
    (the walk's own bounds on `walked` left out), or None for any other."""
    found = []
    for field, condition in query.items():
        if field == "$and" and isinstance(condition, list) and condition \
                and all(isinstance(clause, dict) for clause in condition):
            for clause in condition:
                inner = _conditions(clause, None)
                if inner is None:
                    return None
                found.extend(inner)
        elif field.startswith("$") or "." in field:
            return None
        elif not (field == walked and walked_bounds(condition)):
            found.append((field, condition))
    return found


def _string_test(condition):
    """A test of a string value for `condition` (a string, comparisons
    with strings, or `$in` of strings: a cascade's batch), or None when it
    is not one."""
    if isinstance(condition, str):
        return lambda value: value == condition
    members = strings_in(condition)
    if members is not None:
        members = frozenset(members)
        return lambda value: value in members
    if isinstance(condition, dict) and condition and all(
            op in _COMPARE and isinstance(bound, str) for op, bound in condition.items()):
        tests = [(_COMPARE[op], bound) for op, bound in condition.items()]
        if len(tests) == 1:
            (compare, bound), = tests
            return lambda value: compare(value, bound)
        if len(tests) == 2:  # a range, as prefixes and version ranges are
            (first, low), (second, high) = tests
            return lambda value: first(value, low) and second(value, high)
        return lambda value: all(compare(value, bound) for compare, bound in tests)
    return None


class _Undecided(Exception):
    """A document holds something other than a string where one is compared."""


_NUMBERS = frozenset({int, float})  # by class: a bool is no number to MongoDB
# the values this module compares itself (None has its own checks)
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _number_test(condition):
    """A test of a number for comparisons with numbers (`{"$lt": 5}`, a
    scan's time), or None when it is not one."""
    if isinstance(condition, dict) and condition and all(
            op in _COMPARE and bound.__class__ in _NUMBERS and bound == bound  # not NaN
            for op, bound in condition.items()):
        tests = [(_COMPARE[op], bound) for op, bound in condition.items()]
        return lambda value: all(compare(value, bound) for compare, bound in tests)
    return None


def _path_reader(field):
    """`read(document, default)`: the value at `field`, a top-level name or a
    dotted path through objects (`readiness.status`), else `default`.
    Anything but an object on the way (an array, whose elements may match;
    a scalar) raises _Undecided: mongomock's rules decide."""
    if "." not in field:
        return lambda document, default=None: document.get(field, default)
    parts = field.split(".")

    def read(document, default=None):
        for part in parts:
            if document.__class__ is not dict:
                raise _Undecided()
            document = document.get(part, _ABSENT)
            if document is _ABSENT:
                return default
        return document
    return read


def _field_check(field, condition):
    """A test of one field (top-level, or a dotted path through objects)
    for `condition` (a string, comparisons with strings or with numbers,
    None, or `{"$exists": bool}`), or None when it is not one."""
    read = _path_reader(field)
    test = _number_test(condition)
    if test is not None:
        def compared_number(document):
            found = read(document)
            if found.__class__ not in _NUMBERS or found != found:
                if found is None:  # null or missing: no number
                    return False
                raise _Undecided()  # an array, another type, NaN: mongomock's rules
            return test(found)
        return compared_number
    if condition is None:  # null or missing
        def null(document):
            found = read(document)
            if found is None:
                return True
            if found.__class__ in _SCALARS:
                return False
            raise _Undecided()
        return null
    test = _string_test(condition)
    if test is not None:
        def compared(document):
            found = read(document, _ABSENT)
            if found.__class__ is not str:
                # an array matches if an element does; types compare in
                # brackets: mongomock's rules decide
                if found is _ABSENT:
                    return False
                raise _Undecided()
            return test(found)
        return compared
    exists = _exists_test(condition)
    if exists is not None:
        return lambda document: (read(document, _ABSENT) is not _ABSENT) is exists
    if isinstance(condition, list):  # an array read back (a conditional write: the outbox)
        def same_array(document):
            if _identical(read(document, _ABSENT), condition):
                return True
            raise _Undecided()  # unequal, or equal another way (an element): mongomock's rules
        return same_array
    return None


def _exists_test(condition):
    """The bool of `{"$exists": bool}`, else None."""
    if isinstance(condition, dict) and condition.keys() == {"$exists"} \
            and isinstance(condition["$exists"], bool):
        return condition["$exists"]
    return None


_FORM = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def _identical(first, second):
    """Whether two values are the same BSON value by their very form: the
    same types, objects with the same keys in the same order. (MongoDB calls
    more values equal, 1 and 1.0; those are left to mongomock.)"""
    kind = first.__class__
    if kind is not second.__class__:
        return False
    if kind is dict or kind is list:
        # An outbox read back (whole events with their records) is compared
        # in C: orjson writes each type its own way (1, 1.0, true, "1"), keys
        # in order. Only `null` is ambiguous (None, NaN); what orjson does
        # not write plainly (datetimes, subclasses, big integers) is walked.
        try:
            written = orjson.dumps(first, option=_FORM)
            if b"null" not in written:
                return written == orjson.dumps(second, option=_FORM)
        except orjson.JSONEncodeError:
            pass
        return _walked_identical(first, second)
    return kind in _SCALARS and first == second


def _walked_identical(first, second):
    kind = first.__class__
    if kind is not second.__class__:
        return False
    if kind is dict:
        return len(first) == len(second) and all(
            key == other_key and _walked_identical(value, other_value)
            for (key, value), (other_key, other_value) in zip(first.items(), second.items()))
    if kind is list:
        return len(first) == len(second) and all(map(_walked_identical, first, second))
    return kind in _SCALARS and first == second


def _all_of(checks):
    if len(checks) == 1:
        return checks[0]

    def every(document):
        for check in checks:
            if not check(document):
                return False
        return True
    return every


def _any_of(checks):
    def some(document):
        for check in checks:
            if check(document):
                return True
        return False
    return some


def _tree_check(query, walked=None):
    """A test of a document for a query made of the field conditions
    `_field_check` knows, joined by `$and`, `$or` and `$nor` (what a filter
    with OR and NOT compiles into, and `support.status`'s version ranges),
    on top-level fields or dotted paths through objects (`readiness.status`,
    `labels.team`); None for any other query. It raises _Undecided where
    mongomock must decide."""
    checks = []
    for field, condition in query.items():
        if field in ("$and", "$or", "$nor"):
            if not (isinstance(condition, list) and condition
                    and all(isinstance(clause, dict) for clause in condition)):
                return None
            inner = [_tree_check(clause) for clause in condition]
            if any(check is None for check in inner):
                return None
            if field == "$and":
                checks.extend(inner)
            elif field == "$or":
                checks.append(_any_of(inner))
            else:
                some = _any_of(inner)
                checks.append(lambda document, some=some: not some(document))
        elif field.startswith("$") or field.startswith(".") or field.endswith(".") \
                or ".." in field or "$" in field:
            return None
        elif not (field == walked and walked_bounds(condition)):
            check = _field_check(field, condition)
            if check is None:
                return None
            checks.append(check)
    return _all_of(checks) if checks else (lambda document: True)


def strings_in(condition):
    """The strings of `{"$in": [strings]}`, else None."""
    if isinstance(condition, dict) and condition.keys() == {"$in"} \
            and isinstance(condition["$in"], list) \
            and all(isinstance(value, str) for value in condition["$in"]):
        return condition["$in"]
    return None


def matcher(query, walked=None):
    """A function telling whether a document matches `query`, as mongomock's
    matcher would. The conditions the store and its filters send most
    (fields compared with strings, `{"$exists": bool}`, joined by `$and`;
    the bounds on the `walked` field, which a walk applies itself) are
    checked directly in one loop; the same conditions joined by `$or` and
    `$nor` too, and those the tree knows besides (numbers, null, an array
    read back), as a small tree of tests. Any other query, and a document
    holding an array or a non-string where a string is compared, go to
    mongomock."""
    def mongomock(document):
        return mongomock_internals.filter_applies(query, document)
    conditions = _conditions(query, walked)
    if conditions is None:
        return _tree_matcher(query, walked, mongomock)
    checks = []  # (field, test of a string value, or None; $exists, or None)
    for field, condition in conditions:
        test = _string_test(condition)
        exists = None if test is not None else _exists_test(condition)
        if test is None and exists is None:  # numbers, null, an array: the tree's
            return _tree_matcher(query, walked, mongomock)
        checks.append((field, test, exists))

    def plain(document):
        for field, test, exists in checks:
            if exists is None:
                found = document.get(field, _ABSENT)
                if found.__class__ is not str:
                    # an array matches if an element does; types compare
                    # in brackets: mongomock's rules decide
                    return mongomock(document) if found is not _ABSENT else False
                if not test(found):
                    return False
            elif (field in document) is not exists:
                return False
        return True
    return plain


def _tree_matcher(query, walked, mongomock):
    """The tree of tests of `query` (`_tree_check`), mongomock deciding what
    it cannot; mongomock alone for a query the tree does not know."""
    tree = _tree_check(query, walked)
    if tree is None:
        return mongomock

    def checked(document):
        try:
            return tree(document)
        except _Undecided:
            return mongomock(document)
    return checked


def bounds(query, field="_id"):
    """(lower, lower inclusive, upper, upper inclusive) of a string range on `field`."""
    condition = query.get(field)
    if not isinstance(condition, dict):
        return None, False, None, False
    lower = condition.get("$gt", condition.get("$gte"))
    upper = condition.get("$lt", condition.get("$lte"))
    return (lower if isinstance(lower, str) else None, "$gte" in condition,
            upper if isinstance(upper, str) else None, "$lte" in condition)

