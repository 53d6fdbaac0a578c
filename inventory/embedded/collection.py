"""`LockedCollection`: a mongomock collection made as safe under threads as
MongoDB and as quick to read by key as an index.

Every operation runs under the store's one lock (`inventory.embedded.lock`),
which makes each whole operation atomic: at least what MongoDB promises. What
the store sends most is answered from the collection's documents directly:
reads (`reads`), counts (`counting`), writes by key (`writes`), kept in the
collection's own indexes (`key_index`) and expiry (`expiry`); anything else
is mongomock's own operation, under the lock, after which the indexes are
made again when next needed.

The design, and why: docs/design/embedded-store.md"""
from inventory.embedded.counting import Counting
from inventory.embedded.documents import copy_stored
from inventory.embedded.expiry import Expiry, expiry_heap
from inventory.embedded.key_index import KeyIndex, lookup_of
from inventory.embedded.lock import LOCK
from inventory.embedded.matching import matcher
from inventory.embedded.reads import Reads
from inventory.embedded.writes import CountingWrites, Writes

_READS = frozenset({"count_documents", "estimated_document_count", "index_information",
                    "list_indexes", "distinct", "name", "full_name", "database"})
# writes that change indexes, not documents: the caches of keys and orders
# (a pass over every document to make again) stay
_INDEX_WRITES = frozenset({"create_index", "create_indexes", "drop_index", "drop_indexes"})
# mongomock's writes that change a stored document in place
_IN_PLACE_WRITES = frozenset({"update_one", "update_many", "replace_one", "find_one_and_update",
                              "find_one_and_replace", "bulk_write",
                              # its older ones (each calls one of the above): every
                              # document is copied, their first argument is no filter
                              "update", "find_and_modify", "save"})
_FILTER_FIRST = frozenset({"update_one", "update_many", "replace_one", "find_one_and_update",
                           "find_one_and_replace"})


class LockedCollection(Reads, Counting, Writes, KeyIndex, Expiry):
    """A mongomock collection whose every operation holds the lock.

    Made of mixins, one responsibility each in its own module, over the one
    state declared here: they are one object's parts (every fast path reads
    the documents and the indexes that every write keeps, under one lock),
    so composed objects would pass each other that state on every call of
    the hot paths; as mixins each call stays what it was, one method away."""

    def __init__(self, collection, journal=None):
        self._collection = collection
        # how many writes began here (any that may change a document): a
        # reader that saw the same count before its read and now knows
        # nothing was written since (the tokens' cache of their callers)
        self.writes = 0
        self._write_lock = CountingWrites(self, LOCK if journal is None
                                          else journal.committing(LOCK, collection.name))
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

    def __getattr__(self, name):
        if name.startswith("_unkeyed_"):  # mongomock's own, caches dropped as for any write
            return self._locked(name.removeprefix("_unkeyed_"))
        return self._locked(name)

    def warm(self):
        """Make, before anything is served, what reads would otherwise make
        on first use under the lock: the order of the keys, the lookups of
        indexed fields and the expiry heap (each a pass over every document,
        0.1-0.5 s at a million)."""
        with LOCK:
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
                self._by_field[field] = lookup_of(values, ids)
            if expiring:
                self._expiring = expiry_heap(columns[-1], ids)
            self._expire()
            self._ordered_keys()

    def warming_steps(self):
        """`warm`'s passes one by one, each to be run under the lock: for a
        start that answers first and warms after, letting others run between
        passes (`LockedDatabase.warm_in_turns`)."""
        with LOCK:
            fields = sorted({info["key"][0][0] for info in
                             self._collection.index_information().values()
                             if not info["key"][0][0].startswith("_")}
                            - {self._ttl[0] if self._ttl is not None else None})
        steps = [lambda field=field: self._index_lookup(field) for field in fields]
        return [*steps, self._expire, self._ordered_keys]

    def _locked(self, name):
        attribute = getattr(self._collection, name)
        if not callable(attribute):
            return attribute

        def locked(*args, **kwargs):
            with LOCK if name in _READS else self._write_lock:
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
        matches = matcher(filter) if isinstance(filter, dict) else None
        for key in list(documents) if keys is None else keys:
            document = documents.get(key)
            if document is not None and (matches is None or matches(document)):
                documents[key] = copy_stored(document)

