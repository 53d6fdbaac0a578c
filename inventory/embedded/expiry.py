"""Expiry (TTL indexes) of the embedded collection, taken over from
mongomock: it sweeps every document on each access; here a heap of
(expiry time, `_id`) is walked from the soonest, so that an expiry costs
the documents that expire, not all stored. The index stays listed as
mongomock's."""
import heapq
from datetime import datetime, timezone

from inventory.embedded import mongomock_internals


def expiry_heap(moments, keys):
    """A heap of (expiry time, _id) of the documents whose TTL field holds
    a time (stored times are naive already: mongomock_internals.as_stored)."""
    heap = [(moment if moment.tzinfo is None else _naive(moment), key)
            for moment, key in zip(moments, keys) if isinstance(moment, datetime)]
    heapq.heapify(heap)
    return heap


def _naive(value):
    """A stored time as naive UTC, or None when it is not a time."""
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is None else value.astimezone(timezone.utc).replace(tzinfo=None)


class Expiry:
    """A `LockedCollection`'s expiry (a mixin, under its lock): `_ttl`
    ((field, seconds) of its TTL index, or None) and `_expiring` (the heap,
    or None until needed: dropped by mongomock's own writes). An expired
    document leaves the indexes as a delete does (`KeyIndex._forget`)."""

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
            self._expiring = expiry_heap([document.get(self._ttl[0]) for document in documents],
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
