"""Counts by field paths, the aggregations the store sends most (a
summary's `$group`, a rollout's `$facet` of them), answered by the embedded
collection in one pass over its documents, in slices that let others in:
mongomock's aggregation engine takes several times as long. Any other
pipeline goes to mongomock, but for one that writes a collection ($out,
$merge), refused: it would change documents behind that collection's own
indexes (`KeyIndex`), and the service sends none."""
import collections
import contextlib

from pymongo.errors import OperationFailure

from inventory.embedded.lock import LOCK
from inventory.embedded.matching import matcher

_ABSENT = object()


def count_by_fields(pipeline):
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
        shape = count_by_fields(sub)
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


class Counting:
    """A `LockedCollection`'s aggregations (a mixin): it relies on the
    collection's `_document_slices` (`Reads`) for its pass."""

    def aggregate(self, pipeline, **kwargs):
        """A list. A count of the documents matching a query by field paths
        (what summaries send) is one pass over the documents, with the
        query checked as `find` checks it: mongomock's aggregation engine
        takes several times as long. So is a `$match` followed by a
        `$facet` of such counts (what a rollout's status sends: each stage
        a facet): one pass for every facet. The pass reads and counts in
        slices that let others in (`_counts`); shaping the answer does not
        hold the lock. Any other pipeline, or a grouped value that is an
        object or an array of them, or a dotted path through an array
        (mongomock's rules decide those), goes to mongomock, inside the
        lock; one that writes ($out, $merge) is refused (OperationFailure)."""
        shape = None if kwargs else count_by_fields(pipeline)
        if shape is not None:
            query, paths, count_name = shape
            (counts,) = self._counts(matcher(query), [(_everything, paths)])
            if counts is not None:
                return _count_rows(counts, paths, count_name)
        faceted = None if kwargs or shape is not None else _faceted_counts(pipeline)
        if faceted is not None:
            query, facets = faceted
            found = self._counts(matcher(query), [(matcher(facet_query), paths)
                                                   for facet_query, paths, _ in facets.values()])
            if all(counts is not None for counts in found):
                return [{name: _count_rows(counts, paths, count_name)
                         for (name, (_, paths, count_name)), counts in zip(facets.items(), found)}]
        if isinstance(pipeline, list) and any(
                isinstance(stage, dict) and stage.keys() & {"$out", "$merge"} for stage in pipeline):
            # it would write another collection behind that one's indexes
            raise OperationFailure("$out and $merge are not supported by the embedded store")
        with LOCK:
            return list(self._collection.aggregate(pipeline, **kwargs))

    def _counts(self, matches, facets):
        """For each facet `(matches_too, paths)`: a Counter of the documents
        matching `matches` and `matches_too` by their values of `paths`
        (_ABSENT where none), or None when a value is an object or an array
        (unhashable: mongomock's rules decide). Read a column at a time,
        which costs half what a loop per document does, and counted as it
        reads, in slices of lock.SLICE_DOCUMENTS documents, letting others in
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
                    rows = _rows(kept, paths)
                    if rows is None:
                        found[index] = None
                    else:
                        counts.update(rows)
        return found


def _rows(documents, paths):
    """A Counter of `documents` by their values of `paths`, or None where
    mongomock's rules decide (a value that is an object or an array of
    them, a dotted path through an array). Arrays are rare: the values are
    counted as read, and wrapped (_Array) only when that fails on one."""
    try:
        columns = [_column(documents, first, rest) for _, (first, *rest) in paths]
    except _Unanswered:
        return None
    try:
        return collections.Counter(zip(*columns))  # a slice's own: nothing half-counted
    except TypeError:
        pass
    columns = [[_Array(value) if value.__class__ is list else value for value in values]
               for values in columns]
    try:
        return collections.Counter(zip(*columns))
    except TypeError:
        return None


def _column(documents, first, rest):
    """The values of path `first.rest...` of `documents` (_ABSENT where
    none): a dotted path goes through objects only."""
    values = [document.get(first, _ABSENT) for document in documents]
    for part in rest:  # a plain dict read at once; anything else by `_through`
        values = [value.get(part, _ABSENT) if value.__class__ is dict else _through(value, part)
                  for value in values]
    return values


class _Unanswered(Exception):
    """A value these counts do not group as MongoDB does: mongomock's rules decide."""


def _through(value, part):
    """`part` of a value that is not a plain dict: a dict subclass's, or
    none (_ABSENT) for a value that is no object. Through an array MongoDB
    reads each element's (`[{b: 1}, {b: 2}]` groups as [1, 2]): left to
    mongomock."""
    if isinstance(value, dict):
        return value.get(part, _ABSENT)
    if isinstance(value, list):
        raise _Unanswered
    return _ABSENT
