"""The embedded collection's own indexes, kept beside mongomock's documents:
every `_id` in order, each indexed field's lookup (value to `_id`s), the
order of the fields pages are sorted by, and the fields of unique indexes.

They let a read by key go straight to its documents and a page walk a
field's values in order, as MongoDB answers with an index (mongomock reads
and copies every document for both). Each is built on first use, kept up
to date by the writes made here (`Writes`: inserts, writes and deletes by
key) and dropped by any write mongomock makes itself (`LockedCollection`),
to be built again when next needed."""
import bisect

from inventory.embedded import mongomock_internals
from inventory.embedded.matching import bounds, strings_in, walked_bounds

_ABSENT = object()


# An index lookup maps a value to its one holder's `_id`, or to a list of
# them when several hold it (an `_id` is never a list): most indexed fields
# are ids, and a list per value would be a million lists at a million records.


def holders(lookup, value):
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


def lookup_of(values, keys):
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


class KeyIndex:
    """The indexes of a `LockedCollection` (a mixin: they are its state,
    read by its reads and kept by its writes, under its lock):
    `_keys` (every `_id`, in order, or None until needed), `_sorted`
    ({field: [(value, _id), ...] in order}), `_by_field` ({field: lookup},
    or None for a field no index starts with) and `_unique`. It relies on
    the collection's `_collection` (mongomock's) and counts each removed
    document in its `writes`."""

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
            values = [value] if isinstance(value, str) else strings_in(value)
            if values is not None and field == "_id":  # the keys themselves: no lookup to build
                return list(dict.fromkeys(values))
            if values is not None:
                lookup = self._index_lookup(field)
                if lookup is not None:  # a cascade's `{parent: {"$in": [...]}}` too
                    if len(values) == 1:
                        return list(holders(lookup, values[0]))
                    return list(dict.fromkeys(key for one in values
                                              for key in holders(lookup, one)))
        return None

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
        lower, lower_inclusive, upper, upper_inclusive = bounds(query)
        if lower is None or upper is None or not walked_bounds(condition) \
                or self._ordered_keys() is None:
            return None
        keys = self._keys
        start = (bisect.bisect_left if lower_inclusive else bisect.bisect_right)(keys, lower)
        stop = (bisect.bisect_right if upper_inclusive else bisect.bisect_left)(keys, upper)
        return keys[start:stop]

    def _index_lookup(self, field):
        """{value: [_id, ...]} of a field that an index starts with, else None."""
        if field not in self._by_field:
            indexed = any(info["key"][0] == (field, 1)
                          for info in self._collection.index_information().values())
            lookup = None
            if indexed:
                documents = list(self._documents().values())
                lookup = lookup_of([document.get(field) for document in documents],
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

    def _unique_fields(self):
        """The fields of unique indexes, known until an index is written."""
        if self._unique is None:
            self._unique = frozenset(name for info in self._collection.index_information()
                                     .values() if info.get("unique") for name, _ in info["key"])
        return self._unique

    # -- kept by the writes ------------------------------------------------

    def _index_inserted(self, key, document):
        """Add an inserted document to the indexes made so far."""
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

    def _index_changed(self, changed, fields):
        """Follow a write by key that changed top-level `fields` of the
        documents `changed` ((before, after) pairs)."""
        for field in fields & set(self._by_field):
            del self._by_field[field]  # values changed: looked up anew when next needed
        for before, after in changed:
            for field in fields & set(self._sorted):
                self._resort(field, before["_id"], before.get(field), after.get(field))

    def _drop_orders(self):
        """Forget the key order and the sorted fields: made again when next
        read (once after many inserts, not per insert)."""
        self._keys, self._sorted = None, {}

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
