"""Every use the embedded store makes of mongomock-ng's private internals,
in one place.

The embedded store reads and walks a collection's documents itself (a page,
a keyed write, an ordered walk: mongomock's own `find` copies and sorts
every document, README: Performance), and the journal swaps that dict for
one that notes the keys written. mongomock-ng keeps a collection's documents
in `Collection._store` (a `CollectionStore`), as the OrderedDict
`_documents`, and its TTL indexes in `_ttl_indexes`. What each fast path
built on them buys, on its route: docs/decisions.md ("Fast paths in the
embedded store"; bench/embedded_fast_paths.py measures it).

Written for mongomock-ng==7.11.1 (requirements.txt pins it). `check()`
(run by tests/unit/test_private_internals.py) fails with a plain message when an
upgrade moves any of it.
"""
import collections

from mongomock_ng import helpers
from mongomock_ng.filtering import filter_applies

from inventory.core.pinned_versions import check_written_for

WRITTEN_FOR = {"mongomock-ng": "7.11.1"}
DocumentsDict = collections.OrderedDict  # what a collection's documents are kept in

__all__ = ["filter_applies", "DocumentsDict", "collection_store", "documents",
           "replace_documents", "ttl_indexes", "document_key", "as_stored", "check"]


def collection_store(collection):
    """The `CollectionStore` behind a mongomock collection object: where its
    documents and indexes are kept."""
    return collection._store


def documents(store):
    """The dict of a collection store's documents, by (hashed) `_id`."""
    return store._documents


def replace_documents(store, replacement):
    """Put `replacement` (a DocumentsDict subclass, same items) in the
    store's place for its documents."""
    store._documents = replacement
    return replacement


def ttl_indexes(store):
    """The store's TTL indexes (mongomock expires documents from them on reads)."""
    return store._ttl_indexes


def document_key(document_id):
    """The key the documents dict uses for `document_id`."""
    return helpers.hashdict(document_id) if isinstance(document_id, dict) else document_id


def as_stored(document):
    """A copy of `document` as mongomock stores it (its datetimes made naive
    UTC, to the millisecond): mongomock's own function, which makes every
    object and array anew. (A walk of our own that left the scalars alone
    bought nothing on a scan's POST: docs/decisions.md, "Fast paths in the
    embedded store".)"""
    return helpers.patch_datetime_awareness_in_document(document)


def check():
    """Raise AssertionError, saying what moved and what to do, if the
    installed mongomock-ng is not the one this module was written for."""
    import mongomock_ng

    advice = check_written_for(
        "inventory/embedded/mongomock_internals.py", WRITTEN_FOR,
        "re-read mongomock_ng/store.py and helpers.py, adapt that module (the only one that "
        "touches them) and its WRITTEN_FOR, then rerun bench/run.py")
    store = collection_store(mongomock_ng.MongoClient()["check"]["check"])
    for name, kind in (("_documents", DocumentsDict), ("_ttl_indexes", dict), ("indexes", dict)):
        assert isinstance(getattr(store, name, None), kind), \
            f"CollectionStore.{name} is no longer a {kind.__name__}. {advice}."
    for name in ("hashdict", "patch_datetime_awareness_in_document"):
        assert callable(getattr(helpers, name, None)), f"mongomock_ng.helpers.{name} is gone. {advice}."
