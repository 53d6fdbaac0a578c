"""Pages: how every list, and the change feed, is read one page at a time.
Read this module top to bottom; it is the whole walk.

The design, and why: docs/design/paging.md"""
from dataclasses import dataclass

from inventory.core.ordering import Ordering

# A filtered page reads at most this many values of the walked field (and
# the feed at most this many slots): a filter that matches rarely, or one
# no index serves, costs a bounded amount per page, and the page may come
# back short.
MAX_EXAMINED = 1000

# The direction of each walk: (the near bound's operator, the far one's,
# the window end's; the sort direction).
_FORWARDS = ("$gt", "$lt", "$lte", 1)
_BACKWARDS = ("$lt", "$gt", "$gte", -1)


@dataclass(frozen=True)
class PageRequest:
    """One page asked for (1. above)."""

    limit: int
    tree: object = None  # inventory.core.filtering's parsed filter; None: all
    after: str | None = None  # the bound: the walked field's value the last page stopped at
    scope: str | None = None  # the caller's organization; None: all
    ordering: Ordering | None = None  # a declared ordering; None: key order
    backwards: bool = False  # walk the ordering's reverse
    now: str | None = None  # RFC 3339: what the filter's relative times are back from
    # the records go into a JSON answer (a list page, an integration's): a
    # field kept as JSON text may stay that text (inventory.store.stored_json),
    # which the answer embeds; else every field is plain
    answered: bool = False


@dataclass
class Page:
    records: list
    next_after: str | None  # the next page's bound, when another page may follow


def walk(collection, request, to_api, *, field="_id", query=None, scope_query=None,
         visible=None, lower=None, upper=None, window=None):
    """The page `request` asks for of `collection` (2. to 5. above).

    `field`: the stored field walked; `query`: the compiled filter (None:
    all), `scope_query` the scope's clause (kept apart: the window is read
    with it, from the index the scope leads); `visible`: what a record must
    match to be shown at all (not being deleted; not a tombstone). `lower`
    and `upper` (exclusive) bound the list's range. `window`: given when
    the caller has cut the range itself (the feed: its settled run), as
    (the window's end when more follow it, else None); else a filtered
    page cuts it at MAX_EXAMINED."""
    near_op, far_op, window_op, direction = _BACKWARDS if request.backwards else _FORWARDS
    near, far = (upper, lower) if request.backwards else (lower, upper)
    if request.after is not None:  # the bound lies inside the list's range
        near = request.after if near is None else (
            min if request.backwards else max)(near, request.after)
    bounds = {op: value for op, value in ((near_op, near), (far_op, far)) if value is not None}
    if window is not None:
        window_end, = window
    elif query:
        window_end = _window_end(collection, all_of(scope_query, {field: bounds} if bounds
                                                    else None), field, direction)
    else:
        window_end = None
    if window_end is not None:  # inside the range, so it replaces the far bound
        bounds.pop(far_op, None)
        bounds[window_op] = window_end
    docs = list(collection.find(
        all_of(scope_query, query, {field: bounds} if bounds else None, visible),
        sort=[(field, direction)], limit=request.limit + 1))
    if len(docs) > request.limit:
        docs = docs[:request.limit]
        next_after = docs[-1][field]
    else:  # all matches up to the window's end are here: go on after it
        next_after = window_end
    return Page([to_api(doc) for doc in docs], next_after)


def _window_end(collection, range_query, field, direction):
    """The MAX_EXAMINED-th value of `field` in `range_query`, walking in
    `direction`, when more follow it; else None (the rest fits in one
    window). Values only, so that the field's index alone answers."""
    projection = {field: 1} if field == "_id" else {field: 1, "_id": 0}
    keys = list(collection.find(range_query, projection, sort=[(field, direction)],
                                skip=MAX_EXAMINED - 1, limit=2))
    return keys[0][field] if len(keys) == 2 else None


def all_of(*clauses):
    """One query matching all `clauses`: a plain document when their keys
    (fields, or top-level operators such as `$or`) are distinct, else `$and`.
    Both mean the same to MongoDB; the plain one is much cheaper for the
    embedded store to evaluate."""
    clauses = [clause for clause in clauses if clause]
    merged = {}
    for clause in clauses:
        if any(key in merged for key in clause):
            return {"$and": clauses}
        merged.update(clause)
    return merged
