"""The embedded collection's writes that go straight to their documents:
an insert whose unique keys can be checked by lookup, an update that sets,
unsets or increments fields of documents found by key, a delete by key (or
a cascade's range or parent); each keeps the collection's indexes up to
date rather than dropping them. Any other write goes to mongomock, which
scans every document and checks every unique index against each. Every
write holds the collection's write lock, which counts it and, with a data
directory, journals it."""
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError
from pymongo.results import DeleteResult, InsertManyResult, InsertOneResult, UpdateResult

from inventory.embedded import mongomock_internals
from inventory.embedded.documents import plain_inclusion, projected, updated_copy
from inventory.embedded.key_index import holders
from inventory.embedded.lock import LOCK
from inventory.embedded.matching import matcher

# the options that make an index what it is: one with these equal exists already
_SAME_INDEX_OPTIONS = frozenset({"name", "unique", "sparse", "expireAfterSeconds",
                                 "partialFilterExpression"})
_KEYED_UPDATES = frozenset({"$set", "$unset", "$inc"})


class Writes:
    """A `LockedCollection`'s writes by key (a mixin): under its write lock
    (`_write_lock`), after its expiry (`Expiry`), found and kept in its
    indexes (`KeyIndex`); the rest through its locked mongomock calls
    (`LockedCollection._locked`, as `_unkeyed_<name>`)."""

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
            changed = None if kwargs or not plain_inclusion(projection) \
                else self._keyed_update(filter, update, multi=False)
            if changed is None:
                return self._unkeyed_find_one_and_update(
                    filter, update, projection, return_document=return_document, **kwargs)
            if not changed:
                return None
            before, after = changed[0]
            return projected(after if return_document == ReturnDocument.AFTER else before,
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
            documents, matches, deleted = self._documents(), matcher(filter, walked="_id"), []
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
            self._drop_orders()  # rebuilt once when next read, not per insert
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
        self._index_inserted(key, document)
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
            if any(key in documents for key in holders(lookup, document[field])):
                raise DuplicateKeyError(f"E11000 duplicate key error: {field}", 11000)
        return True

    def create_index(self, keys, **kwargs):
        """As MongoDB: an index that exists as asked is left alone (mongomock
        would check every document against it again, a pass at each start)."""
        with LOCK:
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
        documents, updated, matches = self._documents(), [], matcher(filter)
        for key in keys:
            if key in documents and matches(documents[key]):
                after = updated_copy(documents[key], update)
                if after is None:  # mongomock writes them all: none is written here
                    return None
                updated.append((key, after))
                if not multi:
                    break
        changed = []
        for key, after in updated:
            changed.append((documents[key], after))
            documents[key] = after
        self._index_changed(changed, fields)
        if self._expiring is not None and self._ttl[0] in fields:
            for _, after in changed:
                self._will_expire(after)  # its old entry no longer matches it
        return changed


class CountingWrites:
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

