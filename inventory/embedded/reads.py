"""The embedded collection's reads: a record by key, a page walked in one
field's order from its bound to its limit (in slices when it is long), and
every document in slices, straight from mongomock's documents; any other
read goes to mongomock, under the lock."""
import bisect
import contextlib
import time

from inventory.embedded import lock
from inventory.embedded.documents import plain_inclusion, projected
from inventory.embedded.lock import LOCK, end_walk, let_others_in
from inventory.embedded.matching import bounds, matcher


class Reads:
    """A `LockedCollection`'s reads (a mixin): answered from its indexes
    (`KeyIndex`) after its expiry (`Expiry`), under the lock."""

    def estimated_document_count(self, **kwargs):
        """How many documents: the dict's size (mongomock counts by matching
        each). An estimate, as MongoDB's is: documents past their TTL count
        until something removes them (there, the monitor's pass each minute;
        here, the next read or write of this collection, however late: the
        envelope `/healthz` shows may count scans expired since). Not
        expiring here keeps the start's envelope look from building the
        expiry heap over every scan, about a second at the envelope, before
        the service answers."""
        with LOCK:
            return len(self._documents())

    def keys_having(self, field):
        """The `_id`s of the documents that hold top-level `field`: one pass
        over the dict of documents, no query (the outbox sweep's first look,
        at start; the look for interrupted deletes), in slices of
        lock.SLICE_DOCUMENTS that let others in when a slice's time ran out, as
        a long walk does (100k documents take longer than a hold may). A
        document written meanwhile is seen as its slice reads it."""
        found = []
        with contextlib.closing(self._document_slices()) as slices:
            for documents in slices:
                found.extend(document["_id"] for document in documents if field in document)
        return found

    def _document_slices(self):
        """Every document (in key order once that is kept, else as stored),
        in lists of lock.SLICE_DOCUMENTS, read under the
        lock, which is let go between two lists once a slice's time ran out
        (the long walks' turns: others go first). A document written
        meanwhile is read as its slice finds it; one inserted after the
        pass began is not (as a collection scan that yields, on MongoDB).
        Close it when done early: the lock is held until then."""
        queued = False
        LOCK.acquire()
        try:
            self._expire()
            # the kept key order's copy where it is built: listing mongomock's
            # ordered dict walks a linked list through the whole heap, 25-32 ms
            # at 100,000 clusters in one stretch, before the first slice
            keys = list(self._documents()) if self._keys is None else self._keys.copy()
            slice_ends, size = time.perf_counter() + lock.SLICE_SECONDS, lock.SLICE_DOCUMENTS
            for start in range(0, len(keys), size):
                documents = self._documents()
                yield [documents[key] for key in keys[start:start + size] if key in documents]
                if time.perf_counter() > slice_ends and LOCK.held_once():
                    queued = let_others_in(queued, long=True)
                    slice_ends = time.perf_counter() + lock.SLICE_SECONDS
        finally:
            LOCK.release()
            end_walk(queued)

    @property
    def uncopied(self):
        """This collection's `find` and `find_one`, handing out the stored
        documents themselves rather than copies, for a reader that copies
        what it keeps as it reads it (the store's `to_api`) and changes
        nothing: one walk per record, not two. Writes never change a stored
        document in place once a read may have handed it out (a write by key
        stores a new one: `documents.updated`; mongomock's own updates are given
        copies first: `_copy_before_change`)."""
        return _Uncopied(self)

    def find(self, filter=None, projection=None, sort=None, limit=0, skip=0, **kwargs):
        """A list, read inside the lock. A page sorted by one field walks
        that field's values in order, forwards or backwards (skipping `skip`
        matches first, as a filtered page's window does)."""
        return self._find(filter, projection, sort, limit, skip, kwargs, copied=True)

    def _find(self, filter, projection, sort, limit, skip, kwargs, copied):
        with LOCK:
            self._expire()
            if isinstance(sort, list) and len(sort) == 1 and sort[0][1] in (1, -1) \
                    and limit > 0 and not kwargs and plain_inclusion(projection):
                field, direction = sort[0]
                entries = self._ordered_keys() if field == "_id" else self._ordered(field)
                if entries is not None:
                    return self._walk(entries, field, direction == -1, filter or {},
                                      projection, limit, skip, copied)
            key = self._key_of(filter) if sort is None and not skip and not kwargs \
                and plain_inclusion(projection) else None
            if key is not None:  # by `_id` or an indexed field, as find_one
                documents, matches = self._documents(), matcher(filter)
                found = []
                for candidate in key:
                    if candidate in documents and matches(documents[candidate]):
                        found.append(projected(documents[candidate], projection, copied))
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
        with LOCK:
            self._expire()
            key = self._key_of(filter) if plain_inclusion(projection) else None
            if key is None:
                return self._collection.find_one(filter, projection)
            documents, matches = self._documents(), matcher(filter)
            for candidate in key:
                if candidate in documents and matches(documents[candidate]):
                    return projected(documents[candidate], projection, copied)
            return None

    def _walk(self, entries, field, backwards, query, projection, limit, skip=0, copied=True):
        """The page of `query` in `field` order: from the bound the query
        sets on `field`, through `entries` (the `_id`s, or (value, _id)
        pairs), to the limit or the other bound; in slices when it is long
        (`inventory.embedded.lock`: "Long walks")."""
        lower, lower_inclusive, upper, upper_inclusive = bounds(query, field)
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
        documents, found, matches = self._documents(), [], matcher(query, walked=field)
        found_keys, returned = [], None  # `returned`: a set, once the walk has let go
        examined, slice_ends, queued = 0, time.perf_counter() + lock.SLICE_SECONDS, False
        clock_every = lock.CLOCK_EVERY
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
                        found.append(projected(documents[key], projection, copied))
                        found_keys.append(key)
                        if len(found) == limit:
                            break
                index += step
                examined += 1
                if examined % clock_every == 0 and time.perf_counter() > slice_ends \
                        and LOCK.held_once():
                    queued = let_others_in(queued, examined >= lock.LONG_WALK_ENTRIES)
                    documents = self._documents()
                    current = self._ordered_keys() if by_id else self._ordered(field)
                    if current is not None:  # None: no longer walkable; the old keys serve
                        entries = current
                    # on after the last entry examined, wherever the writes put it
                    index = (bisect.bisect_left(entries, entry) - 1 if backwards
                             else bisect.bisect_right(entries, entry))
                    returned = set(found_keys)
                    slice_ends = time.perf_counter() + lock.SLICE_SECONDS
        finally:
            end_walk(queued)
        return found


class _Uncopied:
    """A collection's reads that hand out stored documents uncopied
    (`Reads.uncopied`): what may read them, read-only."""

    __slots__ = ("_collection",)

    def __init__(self, collection):
        self._collection = collection

    def find(self, filter=None, projection=None, sort=None, limit=0, skip=0):
        return self._collection._find(filter, projection, sort, limit, skip, {}, copied=False)

    def find_one(self, filter=None, projection=None):
        return self._collection._find_one(filter, projection, copied=False)

