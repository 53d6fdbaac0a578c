"""The embedded in-memory database: mongomock, made as safe under threads as
MongoDB and as quick to read by key as an index.

Threads. mongomock does not promise that one operation is atomic when threads
race (a `find_one_and_update` reads, then writes). The service relies on
exactly what MongoDB guarantees: unique indexes and atomic single-document
writes. So every operation here runs under one lock, which makes each whole
operation atomic: at least what MongoDB promises. `flask run` serves with
threads, and so do the concurrency tests.

Keys. mongomock evaluates every query against every document and copies
each match before it sorts, so a page or a read by key costs the whole
collection. The two reads the store makes most, one record by `_id` and a
page in `_id` order, are answered here the way MongoDB answers them with its
`_id` index: straight to the document, or walking the keys in order from
the page's lower bound and stopping at the limit. The filter is still
evaluated by mongomock's own matcher, document by document, so the answers
are the same (tests/test_embedded.py compares them).
"""
import bisect
import threading

import mongomock_ng
from mongomock_ng.filtering import filter_applies

_LOCK = threading.RLock()
_READS = frozenset({"count_documents", "estimated_document_count", "index_information",
                    "list_indexes", "distinct", "name", "full_name", "database"})
_ID_ORDER = [("_id", 1)]


def _plain_inclusion(projection):
    """No projection, or one that includes top-level fields and nothing else."""
    return projection is None or all(
        value in (1, True) and "." not in key and not key.startswith("$")
        for key, value in projection.items())


def _copy(value):
    """A copy of a stored document: its containers are dicts and lists, and
    everything else in it is immutable (a plain recursion is several times
    faster than copy.deepcopy)."""
    if isinstance(value, dict):
        return {key: _copy(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_copy(inner) for inner in value]
    return value


def _project(document, projection):
    """A copy of `document` with the fields of an inclusion projection."""
    if projection:
        document = {k: v for k, v in document.items() if k == "_id" or projection.get(k)}
    return _copy(document)


def _id_bounds(query):
    """(lower, lower inclusive, upper, upper inclusive) of a string `_id` range."""
    condition = query.get("_id")
    if not isinstance(condition, dict):
        return None, False, None, False
    lower = condition.get("$gt", condition.get("$gte"))
    upper = condition.get("$lt", condition.get("$lte"))
    return (lower if isinstance(lower, str) else None, "$gte" in condition,
            upper if isinstance(upper, str) else None, "$lte" in condition)


class LockedCollection:
    """A mongomock collection whose every operation holds the lock."""

    def __init__(self, collection):
        self._collection = collection
        self._keys = None  # every `_id`, in order; rebuilt after a write
        self._by_field = {}  # field with an index -> {value: [_id, ...]}; likewise

    def find(self, filter=None, projection=None, sort=None, limit=0, skip=0, **kwargs):
        """A list, read inside the lock; pages in `_id` order walk the keys
        (skipping `skip` matches first, as a filtered page's window does)."""
        with _LOCK:
            if sort == _ID_ORDER and limit > 0 and not kwargs and _plain_inclusion(projection):
                keys = self._ordered_keys()
                if keys is not None:
                    return self._walk(keys, filter or {}, projection, limit, skip)
            return list(self._collection.find(filter, projection, sort=sort, limit=limit,
                                              skip=skip, **kwargs))

    def find_one(self, filter=None, projection=None):
        """A read by `_id`, or by a field with an index, goes straight to the
        documents it can be; anything else to mongomock."""
        with _LOCK:
            key = self._key_of(filter) if _plain_inclusion(projection) else None
            if key is None:
                return self._collection.find_one(filter, projection)
            documents = self._documents()
            for candidate in key:
                if candidate in documents and filter_applies(filter, documents[candidate]):
                    return _project(documents[candidate], projection)
            return None

    def _documents(self):
        """mongomock's own dict of documents by `_id`. Read directly: this
        class's lock already excludes writers, and mongomock's per-access
        reader lock would cost more than the read. (Its TTL expiry, which runs
        on access, is skipped here: the one TTL collection, idempotency keys,
        checks their age itself.)"""
        return self._collection._store._documents

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
            if isinstance(value, str) and not field.startswith("$"):
                lookup = self._index_lookup(field)
                if lookup is not None:
                    return lookup.get(value, [])
        return None

    def _index_lookup(self, field):
        """{value: [_id, ...]} of a field with a single-field index, else None."""
        if field not in self._by_field:
            indexed = any(info["key"] == [(field, 1)]
                          for info in self._collection.index_information().values())
            lookup = None
            if indexed:
                lookup = {}
                for document in self._documents().values():
                    if isinstance(document.get(field), str):
                        lookup.setdefault(document[field], []).append(document["_id"])
            self._by_field[field] = lookup
        return self._by_field[field]

    def _ordered_keys(self):
        if self._keys is None:
            keys = [document["_id"] for document in self._documents().values()]
            if not all(isinstance(key, str) for key in keys):
                return None  # mixed key types: leave ordering to mongomock
            self._keys = sorted(keys)
        return self._keys

    def _walk(self, keys, query, projection, limit, skip=0):
        lower, lower_inclusive, upper, upper_inclusive = _id_bounds(query)
        start = 0
        if lower is not None:
            start = (bisect.bisect_left if lower_inclusive else bisect.bisect_right)(keys, lower)
        documents, found = self._documents(), []
        for index in range(start, len(keys)):
            key = keys[index]
            if upper is not None and (key > upper if upper_inclusive else key >= upper):
                break
            if key in documents and filter_applies(query, documents[key]):
                if skip:
                    skip -= 1
                    continue
                found.append(_project(documents[key], projection))
                if len(found) == limit:
                    break
        return found

    def __getattr__(self, name):
        attribute = getattr(self._collection, name)
        if not callable(attribute):
            return attribute

        def locked(*args, **kwargs):
            with _LOCK:
                if name not in _READS:  # a write may add, remove or change keys
                    self._keys, self._by_field = None, {}
                return attribute(*args, **kwargs)
        return locked


class LockedDatabase:
    def __init__(self, database):
        self._database = database
        self._collections = {}

    def __getitem__(self, name):
        if name.startswith("_"):  # not a collection: copy/pickle probing
            raise AttributeError(name)
        if name not in self._collections:
            self._collections[name] = LockedCollection(self._database[name])
        return self._collections[name]

    __getattr__ = __getitem__

    @property
    def name(self):
        return self._database.name

    @property
    def client(self):
        return self._database.client

    def command(self, *args, **kwargs):
        with _LOCK:
            return self._database.command(*args, **kwargs)


def embedded_database(name):
    return LockedDatabase(mongomock_ng.MongoClient()[name])
