"""The embedded in-memory database: mongomock, made as safe under threads as
MongoDB and as quick to read by key as an index.

Threads. mongomock does not promise that one operation is atomic when threads
race (a `find_one_and_update` reads, then writes). The service relies on
exactly what MongoDB guarantees: unique indexes and atomic single-document
writes. So every operation here runs under one lock, which makes each whole
operation atomic: at least what MongoDB promises. `flask run` serves with
threads, and so do the concurrency tests.

The design, and why: docs/design/embedded-store.md"""
import bisect
import collections
import contextlib
import gc
import heapq
import operator
import threading
import time
from datetime import datetime, timezone

import mongomock_ng
import orjson
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError
from pymongo.results import DeleteResult, InsertManyResult, InsertOneResult, UpdateResult

from inventory.core.errors import Unavailable
from inventory.core.turns import let_others_run as _let_others_run  # a module global: tests patch it
from inventory.embedded import mongomock_internals


class _StoreLock:
    """The store's one lock (reentrant), knowing how deeply the current
    thread holds it: a long walk lets go of it only where no caller above
    relies on holding it.

    It also keeps each thread's time under it since the thread last let
    others run: a sequence of operations (a forced delete's cascade, one
    event per removed record) lets others run between two of them once it
    has held the lock for _TURN_SECONDS, as one long walk does between its
    slices. Under gevent that bounds how long such a sequence holds the loop.
    A thread that stayed away from the lock that long (it waited for a
    client or the disk) starts a new turn: requests one after another on a
    connection do not add up to a turn."""

    def __init__(self):
        self._lock = threading.RLock()
        self._held = threading.local()  # greenlet-local under gevent

    def acquire(self):
        self._lock.acquire()
        held = self._held
        held.depth = getattr(held, "depth", 0) + 1
        if held.depth == 1:
            held.since = now = time.perf_counter()
            # away from the lock for a turn's length since its last hold: it
            # waited for something (a client, the disk), and others ran
            if now - getattr(held, "left", now) > _TURN_SECONDS:
                held.used = 0.0

    def release(self):
        """Release; True when this let others run (the turn was used up)."""
        held = self._held
        held.depth -= 1
        if held.depth:
            self._lock.release()
            return False
        held.left = now = time.perf_counter()
        held.used = getattr(held, "used", 0.0) + now - held.since
        self._lock.release()
        if held.used <= _TURN_SECONDS:
            return False
        self.let_others_run()
        return True

    def let_others_run(self):
        """Between two slices of a walk: others go first; the turn starts anew."""
        self._held.used = 0.0
        _let_others_run()

    def __enter__(self):
        self.acquire()

    def __exit__(self, *exc):
        self.release()

    def held_once(self):
        return getattr(self._held, "depth", 0) == 1


_LOCK = _StoreLock()
_SLICE_SECONDS = 0.002  # a walk's time under the lock before it lets others in
_TURN_SECONDS = 0.005  # a thread's time under the lock, over operations, before others go
_CLOCK_EVERY = 16  # entries examined between looks at the clock
_LONG_WALKS = threading.Semaphore(1)  # long walks advance one at a time
_SLICE_DOCUMENTS = 512  # documents a summary's pass reads between looks at the clock
_LONG_WALK_ENTRIES = 256  # entries examined that make a walk long: more than a page's


_READS = frozenset({"count_documents", "estimated_document_count", "index_information",
                    "list_indexes", "distinct", "name", "full_name", "database"})
# writes that change indexes, not documents: the caches of keys and orders
# (a pass over every document to make again) stay
_INDEX_WRITES = frozenset({"create_index", "create_indexes", "drop_index", "drop_indexes"})
# the options that make an index what it is: one with these equal exists already
_SAME_INDEX_OPTIONS = frozenset({"name", "unique", "sparse", "expireAfterSeconds",
                                 "partialFilterExpression"})
_KEYED_UPDATES = frozenset({"$set", "$unset", "$inc"})
# mongomock's writes that change a stored document in place
_IN_PLACE_WRITES = frozenset({"update_one", "update_many", "replace_one", "find_one_and_update",
                              "find_one_and_replace", "bulk_write",
                              # its older ones (each calls one of the above): every
                              # document is copied, their first argument is no filter
                              "update", "find_and_modify", "save"})
_FILTER_FIRST = frozenset({"update_one", "update_many", "replace_one", "find_one_and_update",
                           "find_one_and_replace"})
_CONTAINERS = (dict, list)
_ABSENT = object()


def _plain_inclusion(projection):
    """No projection, or one that includes top-level fields and nothing else
    (but may leave `_id` out)."""
    return projection is None or all(
        (value in (1, True) or (key == "_id" and value in (0, False)))
        and "." not in key and not key.startswith("$")
        for key, value in projection.items())


def _copy(value):
    """A copy of a stored document: its containers are dicts and lists, and
    everything else in it is immutable (a plain recursion that skips the
    leaves is several times faster than copy.deepcopy)."""
    if isinstance(value, dict):
        return {key: _copy(inner) if isinstance(inner, _CONTAINERS) else inner
                for key, inner in value.items()}
    if isinstance(value, list):
        return [_copy(inner) if isinstance(inner, _CONTAINERS) else inner for inner in value]
    return value


def _walked_bounds(condition):
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
        elif not (field == walked and _walked_bounds(condition)):
            found.append((field, condition))
    return found


def _string_test(condition):
    """A test of a string value for `condition` (a string, comparisons
    with strings, or `$in` of strings: a cascade's batch), or None when it
    is not one."""
    if isinstance(condition, str):
        return lambda value: value == condition
    members = _strings_in(condition)
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
        elif not (field == walked and _walked_bounds(condition)):
            check = _field_check(field, condition)
            if check is None:
                return None
            checks.append(check)
    return _all_of(checks) if checks else (lambda document: True)


# An index lookup maps a value to its one holder's `_id`, or to a list of
# them when several hold it (an `_id` is never a list): most indexed fields
# are ids, and a list per value would be a million lists at a million records.

def _holders(lookup, value):
    """The `_id`s holding `value` in `lookup`."""
    found = lookup.get(value, _ABSENT)
    if found is _ABSENT:
        return ()
    return found if found.__class__ is list else (found,)


def _add_holder(lookup, value, key):
    found = lookup.get(value, _ABSENT)
    if found is _ABSENT:
        lookup[value] = key
    elif found.__class__ is list:
        found.append(key)
    else:
        lookup[value] = [found, key]


def _remove_holder(lookup, value, key):
    found = lookup.get(value, _ABSENT)
    if found.__class__ is list:
        if key in found:
            found.remove(key)
        if len(found) == 1:
            lookup[value] = found[0]
        elif not found:
            del lookup[value]
    elif found is not _ABSENT and found == key:
        del lookup[value]


def _lookup_of(values, keys):
    """The lookup of a field whose values (in the same order as `keys`, the
    `_id`s) are `values`: built in one go when every value is a distinct
    string (an id's), else a holder at a time."""
    lookup = dict(zip(values, keys))
    if len(lookup) != len(values) or set(map(type, lookup)) != {str}:
        lookup = {}
        for value, key in zip(values, keys):
            if value.__class__ is str:
                _add_holder(lookup, value, key)
    return lookup


def _expiry_heap(moments, keys):
    """A heap of (expiry time, _id) of the documents whose TTL field holds
    a time (stored times are naive already: mongomock_internals.as_stored)."""
    heap = [(moment if moment.tzinfo is None else _naive(moment), key)
            for moment, key in zip(moments, keys) if isinstance(moment, datetime)]
    heapq.heapify(heap)
    return heap


def _strings_in(condition):
    """The strings of `{"$in": [strings]}`, else None."""
    if isinstance(condition, dict) and condition.keys() == {"$in"} \
            and isinstance(condition["$in"], list) \
            and all(isinstance(value, str) for value in condition["$in"]):
        return condition["$in"]
    return None


def _matcher(query, walked=None):
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


def _project(document, projection, copied=True):
    """A copy of `document` with the fields of an inclusion projection;
    not `copied`, the stored document itself when there is no projection
    (`LockedCollection.uncopied`)."""
    if projection:
        keep_id = projection.get("_id", True) not in (0, False)
        document = {k: v for k, v in document.items()
                    if (k == "_id" and keep_id) or (k != "_id" and projection.get(k))}
    return _copy(document) if copied else document


def _bounds(query, field="_id"):
    """(lower, lower inclusive, upper, upper inclusive) of a string range on `field`."""
    condition = query.get(field)
    if not isinstance(condition, dict):
        return None, False, None, False
    lower = condition.get("$gt", condition.get("$gte"))
    upper = condition.get("$lt", condition.get("$lte"))
    return (lower if isinstance(lower, str) else None, "$gte" in condition,
            upper if isinstance(upper, str) else None, "$lte" in condition)


def _updated(document, update):
    """A copy of `document` with `$set`/`$unset` (dotted paths) applied, or
    None where a path runs through something that is not an object (left to
    mongomock, which knows the error to raise)."""
    document = _copy(document)
    for update_operator, changes in update.items():
        for path, value in changes.items():
            *parents, last = path.split(".")
            node = document
            for part in parents:
                if part not in node:
                    if update_operator == "$unset":
                        break
                    node[part] = {}
                node = node[part]
                if not isinstance(node, dict):
                    return None
            else:
                if update_operator == "$set":
                    node[last] = _copy(value)
                elif update_operator == "$inc":
                    if type(value) is not int or type(node.get(last, 0)) is not int:
                        return None  # mongomock knows the other numbers' rules
                    node[last] = node.get(last, 0) + value
                else:
                    node.pop(last, None)
    return document


def _count_by_fields(pipeline):
    """(query, [(name, path)], count name) of a pipeline that counts the
    documents matching a query by field paths (`[{"$match": ...},
    {"$group": {"_id": {name: "$path", ...}, count: {"$sum": 1}}}]`, what
    summaries send), else None."""
    if not isinstance(pipeline, list) or len(pipeline) != 2:
        return None
    match, group = pipeline
    if not (isinstance(match, dict) and match.keys() == {"$match"}
            and isinstance(match["$match"], dict)
            and isinstance(group, dict) and group.keys() == {"$group"}
            and isinstance(group["$group"], dict)):
        return None
    group = group["$group"]
    keys, counts = group.get("_id"), [name for name in group if name != "_id"]
    if not isinstance(keys, dict) or len(counts) != 1 or group[counts[0]] != {"$sum": 1}:
        return None
    paths = []
    for name, path in keys.items():
        if not (isinstance(path, str) and path.startswith("$") and len(path) > 1
                and not path.startswith("$$") and not name.startswith("$")):
            return None
        paths.append((name, path[1:].split(".")))
    return match["$match"], paths, counts[0]


def _faceted_counts(pipeline):
    """(query, {facet: (its query, [(name, path parts)], count name)}) of a
    pipeline that matches a query, then counts the matches of each facet's
    own query by field paths (`[{"$match": ...}, {"$facet": {name:
    [{"$match": ...}, {"$group": ...}]}}]`, what a rollout's status sends),
    else None."""
    if not isinstance(pipeline, list) or len(pipeline) != 2:
        return None
    match, facet = pipeline
    if not (isinstance(match, dict) and match.keys() == {"$match"}
            and isinstance(match["$match"], dict) and isinstance(facet, dict)
            and facet.keys() == {"$facet"} and isinstance(facet["$facet"], dict)):
        return None
    facets = {}
    for name, sub in facet["$facet"].items():
        shape = _count_by_fields(sub)
        if shape is None:
            return None
        facets[name] = shape
    return match["$match"], facets


def _everything(document):
    """The matcher of an empty query (a facet that keeps every match)."""
    return True


def _count_rows(counts, paths, count_name):
    """The `$group` rows of `counts` (as `_counts` makes them) by `paths`."""
    names = [name for name, _ in paths]
    return [{"_id": {name: list(value) if value.__class__ is _Array else value
                     for name, value in zip(names, key) if value is not _ABSENT},
             count_name: count}
            for key, count in counts.items()]


class _Array(tuple):
    """An array value while counting: grouped as MongoDB groups arrays (equal
    elements in the same order), answered as a list. An array holding an
    object or an array stays unhashable: mongomock decides those."""

    __slots__ = ()


def _value_at(document, parts):
    """The value at a path's parts, or _ABSENT."""
    for part in parts:
        if not isinstance(document, dict) or part not in document:
            return _ABSENT
        document = document[part]
    return document


def _naive(value):
    """A stored time as naive UTC, or None when it is not a time."""
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is None else value.astimezone(timezone.utc).replace(tzinfo=None)


class LockedCollection:
    """A mongomock collection whose every operation holds the lock."""

    def __init__(self, collection, journal=None):
        self._collection = collection
        # how many writes began here (any that may change a document): a
        # reader that saw the same count before its read and now knows
        # nothing was written since (the tokens' cache of their callers)
        self.writes = 0
        self._write_lock = _CountingWrites(self, _LOCK if journal is None
                                           else journal.committing(_LOCK, collection.name))
        # every `_id`, in order; {field: [(value, _id), ...] in order} for the
        # fields pages have been sorted by; {value: [_id, ...]} for indexed
        # fields: kept up to date by inserts and writes by key, rebuilt after others
        self._keys = None
        self._sorted = {}
        self._by_field = {}
        # TTL indexes, taken over from mongomock (which sweeps every document
        # on each access): (field, seconds), and a heap of (expiry time, _id)
        # walked from the soonest: None until needed, rebuilt after writes
        # made by mongomock
        self._ttl = None
        self._expiring = None
        self._unique = None  # the fields of unique indexes: _unique_fields
        self._take_over_expiry()  # a replayed collection's

    def estimated_document_count(self, **kwargs):
        """How many documents: the dict's size (mongomock counts by matching each)."""
        with _LOCK:
            self._expire()
            return len(self._documents())

    def keys_having(self, field):
        """The `_id`s of the documents that hold top-level `field`: one pass
        over the dict of documents, no query (the outbox sweep's first look,
        at start; the look for interrupted deletes), in slices of
        _SLICE_DOCUMENTS that let others in when a slice's time ran out, as
        a long walk does (100k documents take longer than a hold may). A
        document written meanwhile is seen as its slice reads it."""
        found = []
        with contextlib.closing(self._document_slices()) as slices:
            for documents in slices:
                found.extend(document["_id"] for document in documents if field in document)
        return found

    def _document_slices(self):
        """Every document, in lists of _SLICE_DOCUMENTS, read under the
        lock, which is let go between two lists once a slice's time ran out
        (the long walks' turns: others go first). A document written
        meanwhile is read as its slice finds it; one inserted after the
        pass began is not (as a collection scan that yields, on MongoDB).
        Close it when done early: the lock is held until then."""
        queued = False
        _LOCK.acquire()
        try:
            self._expire()
            keys = list(self._documents())
            slice_ends = time.perf_counter() + _SLICE_SECONDS
            for start in range(0, len(keys), _SLICE_DOCUMENTS):
                documents = self._documents()
                yield [documents[key] for key in keys[start:start + _SLICE_DOCUMENTS]
                       if key in documents]
                if time.perf_counter() > slice_ends and _LOCK.held_once():
                    queued = self._let_others_in(queued, long=True)
                    slice_ends = time.perf_counter() + _SLICE_SECONDS
        finally:
            _LOCK.release()
            if queued:
                _LONG_WALKS.release()

    @property
    def uncopied(self):
        """This collection's `find` and `find_one`, handing out the stored
        documents themselves rather than copies, for a reader that copies
        what it keeps as it reads it (the store's `to_api`) and changes
        nothing: one walk per record, not two. Writes never change a stored
        document in place once a read may have handed it out (a write by key
        stores a new one: `_updated`; mongomock's own updates are given
        copies first: `_copy_before_change`)."""
        return _Uncopied(self)

    def find(self, filter=None, projection=None, sort=None, limit=0, skip=0, **kwargs):
        """A list, read inside the lock. A page sorted by one field walks
        that field's values in order, forwards or backwards (skipping `skip`
        matches first, as a filtered page's window does)."""
        return self._find(filter, projection, sort, limit, skip, kwargs, copied=True)

    def _find(self, filter, projection, sort, limit, skip, kwargs, copied):
        with _LOCK:
            self._expire()
            if isinstance(sort, list) and len(sort) == 1 and sort[0][1] in (1, -1) \
                    and limit > 0 and not kwargs and _plain_inclusion(projection):
                field, direction = sort[0]
                entries = self._ordered_keys() if field == "_id" else self._ordered(field)
                if entries is not None:
                    return self._walk(entries, field, direction == -1, filter or {},
                                      projection, limit, skip, copied)
            key = self._key_of(filter) if sort is None and not skip and not kwargs \
                and _plain_inclusion(projection) else None
            if key is not None:  # by `_id` or an indexed field, as find_one
                documents, matches = self._documents(), _matcher(filter)
                found = []
                for candidate in key:
                    if candidate in documents and matches(documents[candidate]):
                        found.append(_project(documents[candidate], projection, copied))
                        if len(found) == limit:  # a cascade's batch of a large parent
                            break
                return found
            return list(self._collection.find(filter, projection, sort=sort, limit=limit,
                                              skip=skip, **kwargs))

    def find_one(self, filter=None, projection=None):
        """A read by `_id`, or by a field with an index, goes straight to the
        documents it can be; anything else to mongomock."""
        return self._find_one(filter, projection, copied=True)

    def _find_one(self, filter, projection, copied):
        with _LOCK:
            self._expire()
            key = self._key_of(filter) if _plain_inclusion(projection) else None
            if key is None:
                return self._collection.find_one(filter, projection)
            documents, matches = self._documents(), _matcher(filter)
            for candidate in key:
                if candidate in documents and matches(documents[candidate]):
                    return _project(documents[candidate], projection, copied)
            return None

    def aggregate(self, pipeline, **kwargs):
        """A list. A count of the documents matching a query by field paths
        (what summaries send) is one pass over the documents, with the
        query checked as `find` checks it: mongomock's aggregation engine
        takes several times as long. So is a `$match` followed by a
        `$facet` of such counts (what a rollout's status sends: each stage
        a facet): one pass for every facet. The pass reads and counts in
        slices that let others in (`_counts`); shaping the answer does not
        hold the lock. Any other pipeline, or a grouped value that is an
        object or an array of them (mongomock's rules decide those), goes
        to mongomock, inside the lock."""
        shape = None if kwargs else _count_by_fields(pipeline)
        if shape is not None:
            query, paths, count_name = shape
            (counts,) = self._counts(_matcher(query), [(_everything, paths)])
            if counts is not None:
                return _count_rows(counts, paths, count_name)
        faceted = None if kwargs or shape is not None else _faceted_counts(pipeline)
        if faceted is not None:
            query, facets = faceted
            found = self._counts(_matcher(query), [(_matcher(facet_query), paths)
                                                   for facet_query, paths, _ in facets.values()])
            if all(counts is not None for counts in found):
                return [{name: _count_rows(counts, paths, count_name)
                         for (name, (_, paths, count_name)), counts in zip(facets.items(), found)}]
        with _LOCK:
            return list(self._collection.aggregate(pipeline, **kwargs))

    def _counts(self, matches, facets):
        """For each facet `(matches_too, paths)`: a Counter of the documents
        matching `matches` and `matches_too` by their values of `paths`
        (_ABSENT where none), or None when a value is an object or an array
        (unhashable: mongomock's rules decide). Read a column at a time,
        which costs half what a loop per document does, and counted as it
        reads, in slices of _SLICE_DOCUMENTS documents, letting others in
        (as a long walk does) when a slice's time ran out: a document written
        meanwhile is counted as its slice reads it, one inserted after the
        pass began is not (as a collection scan that yields, on MongoDB)."""
        found = [collections.Counter() for _ in facets]
        with contextlib.closing(self._document_slices()) as slices:
            for documents in slices:
                matched = list(filter(matches, documents))
                for index, (matches_too, paths) in enumerate(facets):
                    counts = found[index]
                    if counts is None:
                        continue
                    kept = matched if matches_too is _everything else \
                        list(filter(matches_too, matched))
                    columns = []
                    for _, (first, *rest) in paths:
                        values = [document.get(first, _ABSENT) for document in kept]
                        for part in rest:  # a dotted path: through objects only
                            values = [value.get(part, _ABSENT) if isinstance(value, dict) else
                                      [] if isinstance(value, list) else _ABSENT
                                      for value in values]
                        columns.append([_Array(value) if value.__class__ is list else value
                                        for value in values])
                    try:
                        counts.update(zip(*columns))
                    except TypeError:
                        found[index] = None
        return found

    # -- writes by key -------------------------------------------------------

    def update_one(self, filter, update, **kwargs):
        return self._update(filter, update, kwargs, multi=False, name="update_one")

    def update_many(self, filter, update, **kwargs):
        return self._update(filter, update, kwargs, multi=True, name="update_many")

    def _update(self, filter, update, kwargs, multi, name):
        with self._write_lock:
            self._expire()
            changed = None if kwargs else self._keyed_update(filter, update, multi)
            if changed is None:
                return getattr(self, f"_unkeyed_{name}")(filter, update, **kwargs)
            modified = sum(1 for before, after in changed if before != after)
            return UpdateResult({"n": len(changed), "nModified": modified, "ok": 1.0,
                                 "updatedExisting": bool(changed)}, acknowledged=True)

    def find_one_and_update(self, filter, update, projection=None,
                            return_document=ReturnDocument.BEFORE, **kwargs):
        with self._write_lock:
            self._expire()
            changed = None if kwargs or not _plain_inclusion(projection) \
                else self._keyed_update(filter, update, multi=False)
            if changed is None:
                return self._unkeyed_find_one_and_update(
                    filter, update, projection, return_document=return_document, **kwargs)
            if not changed:
                return None
            before, after = changed[0]
            return _project(after if return_document == ReturnDocument.AFTER else before,
                            projection)

    def delete_one(self, filter, **kwargs):
        return self._delete(filter, kwargs, multi=False)

    def delete_many(self, filter, **kwargs):
        return self._delete(filter, kwargs, multi=True)

    def _delete(self, filter, kwargs, multi):
        """A delete by `_id` (one, a list, or a string range: a cascade of a
        cluster's scans) goes to its documents; anything else to mongomock."""
        with self._write_lock:
            self._expire()
            keys = None if kwargs else self._keys_by_id(filter, ranges=True)
            if keys is None:
                name = "delete_many" if multi else "delete_one"
                return getattr(self, f"_unkeyed_{name}")(filter, **kwargs)
            documents, matches, deleted = self._documents(), _matcher(filter, walked="_id"), []
            for key in keys:
                if key in documents and matches(documents[key]):
                    deleted.append(key)
                    if not multi:
                        break
            self._forget_many([(key, documents.pop(key)) for key in deleted])
            return DeleteResult({"n": len(deleted), "ok": 1.0}, acknowledged=True)

    def insert_one(self, document, **kwargs):
        """An insert whose unique keys can be checked by key (a string `_id`,
        and a string value for each single-field unique index) is checked
        and stored here; any other goes to mongomock, which checks every
        unique index against every document. Either way the key order and
        lookups gain the new key rather than being rebuilt."""
        with self._write_lock:
            self._expire()
            return self._insert(document, kwargs)

    def insert_many(self, documents, ordered=True, **kwargs):
        """Each document inserted as insert_one does, under one hold of the
        lock and one journal line (a seed of a million records stays linear).
        Stops at the first duplicate, as an ordered insert does."""
        documents = list(documents)
        with self._write_lock:
            self._expire()
            self._keys, self._sorted = None, {}  # rebuilt once when next read, not per insert
            ids = [self._insert(document, kwargs).inserted_id for document in documents]
        return InsertManyResult(ids, acknowledged=True)

    def _insert(self, document, kwargs):
        key = document.get("_id")
        if kwargs or not isinstance(key, str) or not self._unique_by_key(document):
            result = self._collection.insert_one(document, **kwargs)
        else:
            self._documents()[key] = mongomock_internals.as_stored(document)  # a copy
            result = InsertOneResult(key, acknowledged=True)
        key = result.inserted_id
        if self._keys is not None:
            if isinstance(key, str):
                bisect.insort(self._keys, key)
            else:
                self._keys = None
        for field, lookup in self._by_field.items():
            if lookup is not None and isinstance(document.get(field), str):
                _add_holder(lookup, document[field], key)
        for field in list(self._sorted):
            self._resort(field, key, None, document.get(field))
        if self._expiring is not None:
            self._will_expire(self._documents()[key])
        return result

    def _unique_by_key(self, document):
        """Check `document`'s unique keys by lookup: DuplicateKeyError if one
        is taken; False when they cannot be checked that way."""
        documents = self._documents()
        if document["_id"] in documents:
            raise DuplicateKeyError("E11000 duplicate key error: _id", 11000)
        for info in self._collection.index_information().values():
            if not info.get("unique"):
                continue
            if len(info["key"]) != 1 or info.get("sparse") or info.get("partialFilterExpression"):
                return False
            field = info["key"][0][0]
            lookup = self._index_lookup(field)
            if lookup is None or not isinstance(document.get(field), str):
                return False
            if any(key in documents for key in _holders(lookup, document[field])):
                raise DuplicateKeyError(f"E11000 duplicate key error: {field}", 11000)
        return True

    # -- expiry (TTL indexes) --------------------------------------------------

    def create_index(self, keys, **kwargs):
        """As MongoDB: an index that exists as asked is left alone (mongomock
        would check every document against it again, a pass at each start)."""
        with _LOCK:
            if isinstance(keys, list) and not set(kwargs) - _SAME_INDEX_OPTIONS:
                wanted = [(field, direction) for field, direction in keys]
                for name, info in self._collection.index_information().items():
                    if info["key"] == wanted and all(
                            info.get(option) in (None, False) if kwargs.get(option) in
                            (None, False) else info.get(option) == kwargs[option]
                            for option in _SAME_INDEX_OPTIONS - {"name"}) and \
                            kwargs.get("name", name) == name:
                        return name
            name = self._locked("create_index")(keys, **kwargs)
            self._take_over_expiry()
            return name

    def _take_over_expiry(self):
        """Move mongomock's TTL indexes here (the index stays listed)."""
        indexes = mongomock_internals.ttl_indexes(
            mongomock_internals.collection_store(self._collection))
        for index in list(indexes.values()):
            if len(index["key"]) == 1:
                ttl = (index["key"][0][0], int(index["expireAfterSeconds"]))
                if ttl != self._ttl:
                    self._ttl, self._expiring = ttl, None
        indexes.clear()

    def _expire(self):
        """Delete the documents whose time has come, walking the heap from
        the soonest: a cost of the expired ones, not of all stored."""
        if self._ttl is None:
            return
        if self._expiring is None:
            documents = list(self._documents().values())
            self._expiring = _expiry_heap([document.get(self._ttl[0]) for document in documents],
                                          [document["_id"] for document in documents])
        field, seconds = self._ttl
        now = datetime.now(timezone.utc).replace(tzinfo=None)
        documents = self._documents()
        while self._expiring and (now - self._expiring[0][0]).total_seconds() >= seconds:
            moment, key = heapq.heappop(self._expiring)
            document = documents.get(key)
            if document is not None and _naive(document.get(field)) == moment:
                self._forget(key, documents.pop(key))

    def _will_expire(self, document):
        moment = _naive(document.get(self._ttl[0]))
        if moment is not None:
            heapq.heappush(self._expiring, (moment, document["_id"]))

    def _keys_by_id(self, query, ranges=False):
        """[the `_id`] of a query by one string `_id`, else None; with
        `ranges`, also the `_id`s of `{"$in": [strings]}` and of a string
        range bounded on both sides, in order."""
        if not isinstance(query, dict):
            return None
        condition = query.get("_id")
        if isinstance(condition, str):
            return [condition]
        if ranges and condition is None:  # by an indexed field (a cascade's children)
            return self._key_of(query)
        if not ranges or not isinstance(condition, dict):
            return None
        if condition.keys() == {"$in"} and isinstance(condition["$in"], list) \
                and all(isinstance(key, str) for key in condition["$in"]):
            return list(dict.fromkeys(condition["$in"]))
        lower, lower_inclusive, upper, upper_inclusive = _bounds(query)
        if lower is None or upper is None or not _walked_bounds(condition) \
                or self._ordered_keys() is None:
            return None
        keys = self._keys
        start = (bisect.bisect_left if lower_inclusive else bisect.bisect_right)(keys, lower)
        stop = (bisect.bisect_right if upper_inclusive else bisect.bisect_left)(keys, upper)
        return keys[start:stop]

    def _keyed_update(self, filter, update, multi):
        """[(before, after), ...] of the documents a `$set`/`$unset` by `_id`
        changed, or None when the write is not one of those."""
        keys = self._keys_by_id(filter, ranges=True)
        if keys is None or not isinstance(update, dict) or not update \
                or set(update) - _KEYED_UPDATES:
            return None
        fields = {path.split(".")[0] for changes in update.values() for path in changes}
        if "_id" in fields or fields & self._unique_fields():
            return None  # mongomock checks what a unique index needs checked
        documents, updated, matches = self._documents(), [], _matcher(filter)
        for key in keys:
            if key in documents and matches(documents[key]):
                after = _updated(documents[key], update)
                if after is None:  # mongomock writes them all: none is written here
                    return None
                updated.append((key, after))
                if not multi:
                    break
        changed = []
        for key, after in updated:
            changed.append((documents[key], after))
            documents[key] = after
        for field in fields & set(self._by_field):
            del self._by_field[field]  # values changed: looked up anew when next needed
        for before, after in changed:
            for field in fields & set(self._sorted):
                self._resort(field, before["_id"], before.get(field), after.get(field))
            if self._expiring is not None and self._ttl[0] in fields:
                self._will_expire(after)  # its old entry no longer matches it
        return changed

    def _unique_fields(self):
        """The fields of unique indexes, known until an index is written."""
        if self._unique is None:
            self._unique = frozenset(name for info in self._collection.index_information()
                                     .values() if info.get("unique") for name, _ in info["key"])
        return self._unique

    def _forget_many(self, removed):
        """`_forget` each of `removed` ((key, document) pairs); keys that lie
        together in the order (a cluster's scans) leave it in one cut, not
        one list shift each."""
        if len(removed) > 1 and self._keys is not None:
            gone = {key for key, _ in removed}
            start = bisect.bisect_left(self._keys, min(gone))
            stop = bisect.bisect_right(self._keys, max(gone))
            if stop - start <= 2 * len(gone):
                self._keys[start:stop] = [key for key in self._keys[start:stop]
                                          if key not in gone]
                for key, document in removed:
                    self._forget(key, document, ordered=False)
                return
        for key, document in removed:
            self._forget(key, document)

    def _forget(self, key, document, ordered=True):
        """Drop a removed document from the caches (`ordered`: from the key
        order too)."""
        self.writes += 1  # (an expiry too, read under the plain lock)
        if ordered and self._keys is not None:
            index = bisect.bisect_left(self._keys, key)
            if index < len(self._keys) and self._keys[index] == key:
                del self._keys[index]
        for field, lookup in self._by_field.items():
            if lookup is not None and isinstance(document.get(field), str):
                _remove_holder(lookup, document[field], key)
        for field in list(self._sorted):
            self._resort(field, key, document.get(field), None)

    def _resort(self, field, key, before, after):
        """Keep `field`'s order as one document's value goes from `before`
        to `after` (None: absent). An order holds string values only: a
        document without one makes it unknown until it is next needed."""
        entries = self._sorted.get(field)
        if entries is None:
            return
        if not isinstance(after, str) and (after is not None or key in self._documents()):
            del self._sorted[field]  # a live document without a string value
            return
        if before == after:
            return
        if isinstance(before, str):
            index = bisect.bisect_left(entries, (before, key))
            if index < len(entries) and entries[index] == (before, key):
                del entries[index]
        if isinstance(after, str):
            bisect.insort(entries, (after, key))

    def __getattr__(self, name):
        if name.startswith("_unkeyed_"):  # mongomock's own, caches dropped as for any write
            return self._locked(name.removeprefix("_unkeyed_"))
        return self._locked(name)

    def _documents(self):
        """mongomock's own dict of documents by `_id`. Read directly: this
        class's lock already excludes writers, and mongomock's per-access
        reader lock would cost more than the read. (Its TTL sweep, which runs
        on every access over every document, is replaced here by `_expire`.)"""
        return mongomock_internals.documents(
            mongomock_internals.collection_store(self._collection))

    def _key_of(self, query):
        """The `_id`s, in insertion order, of the only documents `query` can
        match (those with its `_id`, or its value of an indexed field), or
        None when it is not such a query. Only string values are looked up:
        the service stores no arrays in the fields it looks records up by."""
        if not isinstance(query, dict):
            return None
        if isinstance(query.get("_id"), str):
            return [query["_id"]]
        for field, value in query.items():
            if field.startswith("$"):
                continue
            values = [value] if isinstance(value, str) else _strings_in(value)
            if values is not None and field == "_id":  # the keys themselves: no lookup to build
                return list(dict.fromkeys(values))
            if values is not None:
                lookup = self._index_lookup(field)
                if lookup is not None:  # a cascade's `{parent: {"$in": [...]}}` too
                    if len(values) == 1:
                        return list(_holders(lookup, values[0]))
                    return list(dict.fromkeys(key for one in values
                                              for key in _holders(lookup, one)))
        return None

    def _index_lookup(self, field):
        """{value: [_id, ...]} of a field that an index starts with, else None."""
        if field not in self._by_field:
            indexed = any(info["key"][0] == (field, 1)
                          for info in self._collection.index_information().values())
            lookup = None
            if indexed:
                documents = list(self._documents().values())
                lookup = _lookup_of([document.get(field) for document in documents],
                                    [document["_id"] for document in documents])
            self._by_field[field] = lookup
        return self._by_field[field]

    def _ordered(self, field):
        """[(value, _id), ...] in order, when every document has a string
        `field`; else None (mongomock sorts, as it orders missing values)."""
        if field not in self._sorted:
            entries = [(document.get(field), document["_id"])
                       for document in self._documents().values()]
            if not all(isinstance(value, str) and isinstance(key, str)
                       for value, key in entries):
                return None
            entries.sort()
            self._sorted[field] = entries
        return self._sorted[field]

    def _ordered_keys(self):
        if self._keys is None:
            keys = list(self._documents())  # a string `_id` is its own key there
            if set(map(type, keys)) - {str}:
                return None  # other key types: leave ordering to mongomock
            self._keys = sorted(keys)
        return self._keys

    def warm(self):
        """Make, before anything is served, what reads would otherwise make
        on first use under the lock: the order of the keys, the lookups of
        indexed fields and the expiry heap (each a pass over every document,
        0.1-0.5 s at a million)."""
        with _LOCK:
            # fields of the API (ids, parents, hashes) are looked up; internal
            # ones (a leading underscore: order keys, times) and the expiry
            # time are walked in order
            expiry = self._ttl[0] if self._ttl is not None else None
            fields = sorted({info["key"][0][0] for info in
                             self._collection.index_information().values()
                             if not info["key"][0][0].startswith("_")} - {expiry})
            expiring = self._ttl is not None and self._expiring is None
            read = [field for field in fields] + ([self._ttl[0]] if expiring else [])
            # one pass over the documents (at a million, each pass is mostly
            # cache misses), in C: then the compact rows are worked through
            documents = list(self._documents().values())
            ids = [document["_id"] for document in documents]
            columns = [[document.get(field) for document in documents] for field in read]
            del documents
            for field, values in zip(fields, columns):
                self._by_field[field] = _lookup_of(values, ids)
            if expiring:
                self._expiring = _expiry_heap(columns[-1], ids)
            self._expire()
            self._ordered_keys()

    def warming_steps(self):
        """`warm`'s passes one by one, each to be run under the lock: for a
        start that answers first and warms after, letting others run between
        passes (`LockedDatabase.warm_in_turns`)."""
        with _LOCK:
            fields = sorted({info["key"][0][0] for info in
                             self._collection.index_information().values()
                             if not info["key"][0][0].startswith("_")}
                            - {self._ttl[0] if self._ttl is not None else None})
        steps = [lambda field=field: self._index_lookup(field) for field in fields]
        return [*steps, self._expire, self._ordered_keys]

    def _walk(self, entries, field, backwards, query, projection, limit, skip=0, copied=True):
        """The page of `query` in `field` order: from the bound the query
        sets on `field`, through `entries` (the `_id`s, or (value, _id)
        pairs), to the limit or the other bound; in slices when it is long
        (the module's "Long walks")."""
        lower, lower_inclusive, upper, upper_inclusive = _bounds(query, field)
        by_id = field == "_id"
        value_of = None if by_id else (lambda entry: entry[0])
        if backwards:
            index = (len(entries) if upper is None else (
                bisect.bisect_right if upper_inclusive else bisect.bisect_left)(
                entries, upper, key=value_of)) - 1
        else:
            index = 0 if lower is None else (
                bisect.bisect_left if lower_inclusive else bisect.bisect_right)(
                entries, lower, key=value_of)
        step = -1 if backwards else 1
        documents, found, matches = self._documents(), [], _matcher(query, walked=field)
        found_keys, returned = [], None  # `returned`: a set, once the walk has let go
        examined, slice_ends, queued = 0, time.perf_counter() + _SLICE_SECONDS, False
        try:
            while 0 <= index < len(entries):
                entry = entries[index]
                value, key = (entry, entry) if by_id else entry
                if backwards:
                    if lower is not None and (value < lower if lower_inclusive else value <= lower):
                        break
                elif upper is not None and (value > upper if upper_inclusive else value >= upper):
                    break
                if key in documents and matches(documents[key]) and (
                        returned is None or key not in returned):
                    if skip:
                        skip -= 1
                    else:
                        found.append(_project(documents[key], projection, copied))
                        found_keys.append(key)
                        if len(found) == limit:
                            break
                index += step
                examined += 1
                if examined % _CLOCK_EVERY == 0 and time.perf_counter() > slice_ends \
                        and _LOCK.held_once():
                    queued = self._let_others_in(queued, examined >= _LONG_WALK_ENTRIES)
                    documents = self._documents()
                    current = self._ordered_keys() if by_id else self._ordered(field)
                    if current is not None:  # None: no longer walkable; the old keys serve
                        entries = current
                    # on after the last entry examined, wherever the writes put it
                    index = (bisect.bisect_left(entries, entry) - 1 if backwards
                             else bisect.bisect_right(entries, entry))
                    returned = set(found_keys)
                    slice_ends = time.perf_counter() + _SLICE_SECONDS
        finally:
            if queued:
                _LONG_WALKS.release()
        return found

    def _let_others_in(self, queued, long):
        """Release the lock, wait for this walk's turn if it is `long` (and
        not `queued` already) and for others to run, take the lock back.
        True: this walk holds its turn among the long ones."""
        others_ran = _LOCK.release()
        try:
            if long and not queued:
                _LONG_WALKS.acquire()
                queued = True
            if not others_ran:
                _LOCK.let_others_run()
        finally:
            _LOCK.acquire()
        return queued

    def _locked(self, name):
        attribute = getattr(self._collection, name)
        if not callable(attribute):
            return attribute

        def locked(*args, **kwargs):
            with _LOCK if name in _READS else self._write_lock:
                self._expire()
                if name in _INDEX_WRITES:  # a field not looked up may now be
                    self._by_field = {field: lookup for field, lookup
                                      in self._by_field.items() if lookup is not None}
                    self._unique = None
                elif name not in _READS:  # a write may add, remove or change keys
                    if name in _IN_PLACE_WRITES:  # (before the caches go: a lookup
                        # it makes would otherwise outlive the write)
                        self._copy_before_change(
                            None if name not in _FILTER_FIRST else
                            args[0] if args else kwargs.get("filter"))
                    self._keys, self._sorted, self._by_field = None, {}, {}
                    self._expiring, self._unique = None, None  # a drop takes indexes too
                return attribute(*args, **kwargs)
        return locked

    def _copy_before_change(self, filter):
        """mongomock changes the documents it updates in place: each it may
        change (each matching `filter`; every one for None) is replaced by a
        copy first, so that a document an uncopied read handed out stays as
        it was read. Its own write then reads every document as well."""
        documents = self._documents()
        keys = self._key_of(filter) if isinstance(filter, dict) else None
        matches = _matcher(filter) if isinstance(filter, dict) else None
        for key in list(documents) if keys is None else keys:
            document = documents.get(key)
            if document is not None and (matches is None or matches(document)):
                documents[key] = _copy(document)


class _CountingWrites:
    """A collection's write lock, counting the writes it lets in
    (`LockedCollection.writes`), as each begins."""

    __slots__ = ("_collection", "_lock")

    def __init__(self, collection, lock):
        self._collection, self._lock = collection, lock

    def __enter__(self):
        self._lock.__enter__()
        self._collection.writes += 1

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)


class _Uncopied:
    """A collection's reads that hand out stored documents uncopied
    (`LockedCollection.uncopied`): what may read them, read-only."""

    __slots__ = ("_collection",)

    def __init__(self, collection):
        self._collection = collection

    def find(self, filter=None, projection=None, sort=None, limit=0, skip=0):
        return self._collection._find(filter, projection, sort, limit, skip, {}, copied=False)

    def find_one(self, filter=None, projection=None):
        return self._collection._find_one(filter, projection, copied=False)


class LockedDatabase:
    def __init__(self, database, journal=None):
        self._database = database
        self._collections = {}
        self.journal = journal  # inventory.embedded.journal.Journal, or None: memory only

    def __getitem__(self, name):
        if name.startswith("_"):  # not a collection: copy/pickle probing
            raise AttributeError(name)
        if name not in self._collections:
            if self.journal is not None:
                self.journal.track(name, self._database[name])
            self._collections[name] = LockedCollection(self._database[name], self.journal)
        return self._collections[name]

    __getattr__ = __getitem__

    @property
    def name(self):
        return self._database.name

    @property
    def client(self):
        return self._database.client

    def warm_in_turns(self):
        """Each collection's `warm` passes, one pass per turn of the lock with
        others running between (each pass 0.1-0.5 s at a million records): a
        start that does this after it answers answers about two seconds
        sooner at the envelope, and a request meanwhile waits one pass at
        most, where it would have waited for all of them."""
        for name in self._database.list_collection_names():
            for step in self[name].warming_steps():
                collecting = gc.isenabled()
                gc.disable()  # a pass makes up to a million objects, no cycles
                try:
                    with _LOCK:
                        step()
                finally:
                    if collecting:
                        gc.enable()
                _let_others_run()
        gc.freeze()  # what the passes made, out of the full collections' walk

    def command(self, *args, **kwargs):
        # a store that refuses writes is not ready (/readyz pings), whatever reads do
        refusal = self.journal.refusal if self.journal is not None else None
        if refusal is not None:
            raise Unavailable(refusal)
        with _LOCK:
            return self._database.command(*args, **kwargs)


def embedded_database(name, data_dir=None, fsync="everysec", warm=True):
    """A database in memory; with `data_dir`, journaled there and replayed
    from it, and warmed unless `warm` is false (then `warm_in_turns` later,
    or each pass on its first use)."""
    database = mongomock_ng.MongoClient()[name]
    if not data_dir:
        return LockedDatabase(database)
    from inventory.embedded.journal import Journal

    locked = LockedDatabase(database, Journal.open(data_dir, database, fsync))
    locked.journal.guard(_LOCK)
    if not warm:
        gc.freeze()
        return locked
    collecting = gc.isenabled()
    gc.disable()  # as the replay: millions of objects, no cycles
    try:
        for name in database.list_collection_names():
            locked[name].warm()
    finally:
        if collecting:
            gc.enable()
    gc.freeze()
    return locked
