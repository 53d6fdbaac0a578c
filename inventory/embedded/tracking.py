"""What the writes changed: each collection's dict of documents by `_id`
replaced by one that notes the keys set or removed (`Tracked`), and, on a
commit, those keys' documents (or their removal), the collection's index
definitions when they changed and its drop, as the journal's records.

Why resulting documents, not operations: docs/design/journal.md"""
from inventory.embedded import mongomock_internals
from inventory.embedded.untracked import untrack

_DictStore = mongomock_internals.DocumentsDict  # what mongomock keeps a collection's documents in


class Tracked(_DictStore):
    """A collection's documents by `_id`, noting every key set or removed."""

    def __init__(self, documents=()):
        self.dirty = {}  # keys, in the order first touched
        super().__init__(documents)
        self.dirty = {}  # (what it starts with is not a change)

    def __setitem__(self, key, value):
        _DictStore.__setitem__(self, key, value)
        self.dirty[key] = None

    def __delitem__(self, key):
        _DictStore.__delitem__(self, key)
        self.dirty[key] = None

    def pop(self, key, *default):
        self.dirty[key] = None
        return _DictStore.pop(self, key, *default)

    def popitem(self, last=True):
        key, value = _DictStore.popitem(self, last)
        self.dirty[key] = None
        return key, value

    def setdefault(self, key, default=None):
        self.dirty[key] = None
        return _DictStore.setdefault(self, key, default)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self):
        self.dirty.update(dict.fromkeys(self))
        _DictStore.clear(self)


def tracked_documents(store):
    """The documents of mongomock's `store` of a collection, made `Tracked` if they are not."""
    documents = mongomock_internals.documents(store)
    if not isinstance(documents, Tracked):
        documents = mongomock_internals.replace_documents(store, Tracked(documents))
    return documents


class Tracker:
    """The collections the journal commits: mongomock's store of each (its
    documents `Tracked`), and the index definitions last recorded."""

    def __init__(self):
        self.stores = {}  # name: mongomock's store of a collection, its documents Tracked
        self.indexes = {}  # name: the index definitions last recorded

    def track(self, name, collection):
        """Note the writes to `collection` (a mongomock collection) from now on."""
        if name not in self.stores:
            store = mongomock_internals.collection_store(collection)
            tracked_documents(store)
            self.stores[name] = store
            self.indexes[name] = copied(store.indexes)

    def changes(self, only=None):
        """The records of what the writes since the last commit changed, in
        collection `only` or in all; and the documents' dicts whose notes
        they are, to clear (`committed`) once the records are queued."""
        records, written = [], []
        for name, store in ([(only, self.stores[only])] if only else self.stores.items()):
            documents = mongomock_internals.documents(store)
            if documents.__class__ is not Tracked:  # dropped: a new dict
                records.append({"c": name, "drop": True})
                documents = mongomock_internals.replace_documents(store, Tracked(documents))
                documents.dirty = dict.fromkeys(documents)
                self.indexes[name] = {}
            if store.indexes != self.indexes[name]:
                self.indexes[name] = copied(store.indexes)
                records.append({"c": name, "indexes": self.indexes[name]})
            if documents.dirty:
                written.append(documents)
                for key in documents.dirty:
                    document = documents.get(key)
                    if document is None:
                        records.append({"c": name, "del": key})
                    else:
                        untrack(document)  # walked by no full collection (untracked.py)
                        records.append({"c": name, "put": document})
        return records, written

    @staticmethod
    def committed(written):
        """Clear the notes of the documents' dicts whose records are queued."""
        for documents in written:
            documents.dirty = {}


def copied(indexes):
    """Index definitions as recorded: a copy, each key a list."""
    return {name: {key: (list(value) if key == "key" else value) for key, value in spec.items()}
            for name, spec in indexes.items()}
