"""The mongomock-ng internals the embedded store relies on
(inventory/embedded/mongomock_internals.py), pinned: each pinned reader
answers as mongomock-ng does at the pinned version, or check() fails loudly
(what moved, what to do). marshmallow's and gunicorn's, the same way:
tests/unit/http/test_marshmallow_internals.py and
tests/unit/server/test_gunicorn_internals.py."""
from datetime import datetime, timedelta, timezone

import mongomock_ng
import pytest

from inventory.embedded import mongomock_internals
from inventory.embedded.mongomock_internals import (
    DocumentsDict,
    as_stored,
    collection_store,
    document_key,
    documents,
    replace_documents,
    ttl_indexes,
)


def test_the_internals_are_where_they_were_written_for():
    mongomock_internals.check()


def test_an_upgrade_is_named_with_what_to_do(monkeypatch):
    monkeypatch.setattr(mongomock_internals, "WRITTEN_FOR", {"mongomock-ng": "0.0.1"})
    with pytest.raises(AssertionError, match=r"mongomock-ng 7\.11\.1 is installed\. "
                                             r"inventory/embedded/mongomock_internals\.py was "
                                             r"written for mongomock-ng==0\.0\.1: re-read"):
        mongomock_internals.check()


@pytest.fixture
def database():
    return mongomock_ng.MongoClient()["internals"]


def test_collection_store_is_the_store_of_the_collection_and_its_indexes(database):
    things = database["things"]
    things.create_index("n")
    store = collection_store(things)
    assert collection_store(database["things"]) is store
    assert collection_store(database["others"]) is not store
    assert set(store.indexes) == set(things.index_information()) - {"_id_"}


def test_documents_are_the_stored_documents_by_id_in_insertion_order(database):
    things = database["things"]
    things.insert_many([{"_id": "b", "n": 1}, {"_id": "a", "n": 2}])
    stored = documents(collection_store(things))
    assert isinstance(stored, DocumentsDict)
    assert list(stored.items()) == [(doc["_id"], doc) for doc in things.find()]
    things.delete_one({"_id": "b"})
    assert list(stored) == ["a"]


def test_replace_documents_puts_a_dict_in_their_place_that_mongomock_reads_and_writes(database):
    class Noting(DocumentsDict):
        def __init__(self, *args):
            self.written = []
            super().__init__(*args)

        def __setitem__(self, key, value):
            self.written.append(key)
            super().__setitem__(key, value)
    things = database["things"]
    things.insert_one({"_id": "a"})
    store = collection_store(things)
    replacement = replace_documents(store, Noting(documents(store)))
    things.insert_one({"_id": "b"})
    assert documents(store) is replacement
    assert replacement.written == ["a", "b"]  # its own copy's, then mongomock's
    assert [doc["_id"] for doc in things.find()] == ["a", "b"]


def test_ttl_indexes_are_the_indexes_mongomock_expires_documents_by(database):
    things = database["things"]
    things.create_index("plain")
    store = collection_store(things)
    assert ttl_indexes(store) == {}
    things.create_index("at", expireAfterSeconds=60)
    assert len(ttl_indexes(store)) == 1
    things.insert_one({"_id": "old", "at": datetime.now(timezone.utc) - timedelta(hours=1)})
    assert things.find_one({"_id": "old"}) is None  # expired by mongomock on the read


@pytest.mark.parametrize("key", ["a", 7, {"kind": "x", "n": 1}])
def test_document_key_is_the_key_mongomock_stores_a_document_by(database, key):
    things = database["things"]
    things.insert_one({"_id": key, "n": 1})
    assert documents(collection_store(things))[document_key(key)] == {"_id": key, "n": 1}


def test_as_stored_is_the_document_as_mongomock_stores_it(database):
    document = {"_id": "a", "nested": {"at": datetime(2026, 1, 2, 3, 4, 5, 678901,
                                                      tzinfo=timezone(timedelta(hours=2)))}}
    things = database["things"]
    things.insert_one(dict(document))
    expected = documents(collection_store(things))["a"]
    assert as_stored(document) == expected
    assert expected["nested"]["at"] == datetime(2026, 1, 2, 1, 4, 5, 678000)  # naive UTC, ms
    assert document["nested"]["at"].tzinfo is not None  # the argument is left as it was
