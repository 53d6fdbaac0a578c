"""A stored document's copies (inventory/embedded/documents.py): whole,
projected, and with a write applied, sharing no container with the stored
one."""
import pytest

from inventory.embedded.documents import copy_stored, plain_inclusion, projected, updated_copy

STORED = {"_id": "a", "n": 1, "labels": {"team": "x"}, "list": [{"k": [1]}, 2], "s": "t"}


def test_a_copy_is_equal_and_shares_no_container():
    copy = copy_stored(STORED)
    assert copy == STORED
    assert copy["labels"] is not STORED["labels"] and copy["list"] is not STORED["list"]
    assert copy["list"][0] is not STORED["list"][0]
    assert copy["list"][0]["k"] is not STORED["list"][0]["k"]


@pytest.mark.parametrize("projection, plain", [
    (None, True), ({"n": 1}, True), ({"n": 1, "_id": 0}, True), ({"_id": 1}, True),
    ({"n": 0}, False), ({"labels.team": 1}, False), ({"$slice": 1}, False)])
def test_a_plain_inclusion_is_top_level_fields_included(projection, plain):
    assert plain_inclusion(projection) is plain


def test_a_projection_keeps_its_fields_and_the_id_unless_left_out():
    assert projected(STORED, {"n": 1}) == {"_id": "a", "n": 1}
    assert projected(STORED, {"labels": 1, "_id": 0}) == {"labels": {"team": "x"}}
    kept = projected(STORED, {"labels": 1})
    assert kept["labels"] is not STORED["labels"]
    assert projected(STORED, None) == STORED and projected(STORED, None) is not STORED


def test_an_uncopied_read_is_the_stored_document_itself():
    assert projected(STORED, None, copied=False) is STORED


UNSET = {key: value for key, value in STORED.items() if key != "s"}


@pytest.mark.parametrize("update, expected", [
    ({"$set": {"n": 2, "labels.team": "y", "new.deep": 1}},
     {**STORED, "n": 2, "labels": {"team": "y"}, "new": {"deep": 1}}),
    ({"$unset": {"labels.team": "", "missing.deep": "", "s": ""}}, {**UNSET, "labels": {}}),
    ({"$inc": {"n": 2, "count.clusters": 1}}, {**STORED, "n": 3, "count": {"clusters": 1}}),
])
def test_an_update_applies_to_a_copy(update, expected):
    before = copy_stored(STORED)
    after = updated_copy(STORED, update)
    assert after == expected
    assert STORED == before  # the stored one is unchanged
    assert after["list"] is not STORED["list"]


@pytest.mark.parametrize("update", [
    {"$set": {"s.deeper": 1}},  # a path through a string
    {"$inc": {"n": 1.5}},  # a float: mongomock knows the numbers' rules
    {"$inc": {"s": 1}},  # not a number
])
def test_an_update_mongomock_must_decide_is_none(update):
    assert updated_copy(STORED, update) is None
