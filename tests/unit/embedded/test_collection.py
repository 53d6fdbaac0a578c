"""LockedCollection (inventory/embedded/collection.py): mongomock's own
writes leave documents handed out as they were, and every write counts."""

import pytest


@pytest.mark.parametrize("filter_, update", [
    ({"_id": "a", "$or": [{"x": 1}, {"x": 5}]}, {"$push": {"nested.y": 3}}),  # by key, to mongomock
    ({"x": {"$lt": 2}}, {"$set": {"nested.y": [9]}}),  # by no key
    ({"_id": "a"}, {"$push": {"nested.y": 3}}),  # an operator only mongomock applies
])
@pytest.mark.parametrize("method", ["update_one", "update_many", "find_one_and_update"])
def test_a_document_handed_out_uncopied_stays_as_read_through_mongomocks_writes(
        collections, filter_, update, method):
    _, locked = collections
    handed_out = locked.uncopied.find_one({"_id": "a"})
    getattr(locked, method)(filter_, update)
    assert handed_out["nested"]["y"] == [1, 2]  # mongomock changed a copy, in the store
    assert locked.find_one({"_id": "a"})["nested"]["y"] != [1, 2]


def test_replace_and_bulk_writes_leave_documents_handed_out_as_they_were(collections):
    from pymongo import UpdateOne

    _, locked = collections
    handed_out = locked.uncopied.find_one({"_id": "b"})
    locked.replace_one({"_id": "b"}, {"x": 20})
    assert handed_out == {"_id": "b", "x": 2, "organization": "o1", "_rev": "r1"}
    handed_out = locked.uncopied.find_one({"_id": "a"})
    locked.bulk_write([UpdateOne({"x": 1}, {"$push": {"nested.y": 7}})])
    assert handed_out["nested"]["y"] == [1, 2]
    assert locked.find_one({"_id": "a"})["nested"]["y"] == [1, 2, 7]


@pytest.mark.parametrize("write", [
    lambda c: c.insert_one({"_id": "d", "x": 4}),
    lambda c: c.update_one({"_id": "b"}, {"$set": {"x": 5}}),
    lambda c: c.update_one({"x": 3}, {"$set": {"x": 5}}),  # by no key: mongomock's
    lambda c: c.find_one_and_update({"_id": "b"}, {"$inc": {"x": 1}}),
    lambda c: c.delete_one({"_id": "c"}),
    lambda c: c.delete_many({"x": {"$gt": 1}}),
    lambda c: c.replace_one({"_id": "b"}, {"x": 1}),
])
def test_every_write_counts_in_writes(collections, write):
    _, locked = collections
    before = locked.writes
    locked.find_one({"_id": "b"})
    locked.find({"x": {"$gt": 0}})
    assert locked.writes == before  # reads do not count
    write(locked)
    assert locked.writes > before


@pytest.mark.parametrize("write", [
    lambda c: c.update({"_id": "a"}, {"$push": {"nested.y": 3}}),
    lambda c: c.find_and_modify({"_id": "a"}, {"$push": {"nested.y": 3}}),
    lambda c: c.save({"_id": "a", "x": 1, "nested": {"y": [3]}}),
])
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_mongomocks_older_writes_leave_documents_handed_out_as_they_were(collections, write):
    _, locked = collections
    handed_out = locked.uncopied.find_one({"_id": "a"})
    write(locked)
    assert handed_out["nested"]["y"] == [1, 2]
    assert locked.find_one({"_id": "a"})["nested"]["y"] != [1, 2]
