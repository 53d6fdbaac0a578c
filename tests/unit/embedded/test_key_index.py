"""The embedded collection's own indexes (inventory/embedded/key_index.py):
lookups by indexed fields kept right through every kind of write."""

import mongomock_ng
import pytest
from pymongo.errors import DuplicateKeyError

from inventory.embedded.collection import LockedCollection
from inventory.embedded.key_index import holders, lookup_of


def test_lookups_by_an_indexed_field_follow_one_then_several_then_no_holders():
    """An indexed field's lookup keeps one holder as itself and several as
    a list: reads by the field see every change of holders."""
    collection = LockedCollection(mongomock_ng.MongoClient().db.things)
    collection.create_index([("parent", 1)])
    collection.insert_one({"_id": "a", "parent": "p"})
    assert [d["_id"] for d in collection.find({"parent": "p"})] == ["a"]
    collection.insert_one({"_id": "b", "parent": "p"})
    collection.insert_one({"_id": "c", "parent": "q"})
    assert sorted(d["_id"] for d in collection.find({"parent": "p"})) == ["a", "b"]
    assert sorted(d["_id"] for d in collection.find({"parent": {"$in": ["p", "q"]}})) == \
        ["a", "b", "c"]
    collection.delete_one({"_id": "a"})
    assert [d["_id"] for d in collection.find({"parent": "p"})] == ["b"]
    collection.delete_one({"_id": "b"})
    assert collection.find({"parent": "p"}) == []
    collection.insert_one({"_id": "d", "parent": "p"})
    assert [d["_id"] for d in collection.find({"parent": "p"})] == ["d"]
    codes = LockedCollection(mongomock_ng.MongoClient().db.codes)
    codes.create_index([("code", 1)], unique=True)
    codes.insert_one({"_id": "e", "code": "x"})
    with pytest.raises(DuplicateKeyError):
        codes.insert_one({"_id": "f", "code": "x"})
    codes.delete_one({"_id": "e"})
    codes.insert_one({"_id": "f", "code": "x"})
    assert [d["_id"] for d in codes.find({"code": "x"})] == ["f"]


@pytest.mark.parametrize("write", [
    # mongomock's own writes ($push, upsert, replace), filtered by the indexed
    # field: the documents they may change are copied first (_copy_before_change)
    lambda c: c.update_one({"code": "x"}, {"$set": {"code": "y"}, "$push": {"l": 1}}),
    lambda c: c.update_many({"code": "x"}, {"$set": {"code": "y"}, "$push": {"l": 1}}),
    lambda c: c.replace_one({"code": "x"}, {"code": "y", "l": []}),
    lambda c: c.find_one_and_update({"code": "x"}, {"$set": {"code": "y"}, "$push": {"l": 1}}),
    lambda c: c.update_one({"code": "y"}, {"$set": {"l": [1]}}, upsert=True),
])
def test_lookups_by_an_indexed_field_stay_right_through_mongomocks_writes_filtered_by_it(write):
    plain = mongomock_ng.MongoClient().db.things
    plain.create_index("code")
    locked = LockedCollection(plain)
    locked.insert_one({"_id": "a", "code": "x", "l": []})
    assert locked.find_one({"code": "x"})["_id"] == "a"  # the lookup is made
    write(locked)
    for code in ("x", "y"):
        assert locked.find_one({"code": code}) == plain.find_one({"code": code})
        assert locked.find({"code": code}) == list(plain.find({"code": code}))


def test_a_lookup_holds_one_key_as_itself_and_several_as_a_list():
    """Most indexed fields are ids: one holder each, kept without a list."""
    ids = lookup_of(["x", "y", "z"], ["a", "b", "c"])
    assert ids == {"x": "a", "y": "b", "z": "c"}
    assert list(holders(ids, "x")) == ["a"] and list(holders(ids, "w")) == []
    parents = lookup_of(["p", "p", None, 5, "q"], ["a", "b", "c", "d", "e"])
    assert parents == {"p": ["a", "b"], "q": "e"}  # only strings are looked up
    assert list(holders(parents, "p")) == ["a", "b"]
