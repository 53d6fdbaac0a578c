"""A collection that records the queries a list sends (tests of query shapes)."""


class RecordingCollection:
    """Wraps a pymongo collection and records each find's arguments."""

    def __init__(self, collection):
        self._collection = collection
        self.finds = []

    @property
    def wrapped(self):
        """The collection it wraps (to put back, or to explain() a recorded find on)."""
        return self._collection

    def find(self, *args, **kwargs):
        self.finds.append((args, kwargs))
        return self._collection.find(*args, **kwargs)

    @property
    def uncopied(self):
        """The wrapped collection's uncopied reads (the embedded store's), recorded too."""
        # (asked of the class: pymongo's collection answers with a sub-collection)
        reads = RecordingCollection(self._collection.uncopied
                                    if hasattr(type(self._collection), "uncopied")
                                    else self._collection)
        reads.finds = self.finds
        return reads

    def __getattr__(self, name):
        if name in ("count_documents", "estimated_document_count", "aggregate"):
            raise AssertionError(f"a list must not call {name}")
        return getattr(self._collection, name)
