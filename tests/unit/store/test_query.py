"""inventory/store/query.py: a compiled query checked against a row of
stored values (row_test) matches as the embedded store (MongoDB's rules)
matches the document the row stands for."""
import itertools

import mongomock_ng
import pytest

from inventory.store.query import row_test

VALUES = ["a", "b", "team-1", "team-10", "team-2", None, "absent"]
QUERIES = [
    {"x": {"$eq": "a"}}, {"x": {"$ne": "a"}}, {"x": {"$eq": None}}, {"x": {"$ne": None}},
    {"x": {"$gte": "team-1", "$lt": "team-2"}}, {"x": {"$not": {"$gte": "team-1", "$lt": "team-2"}}},
    {"x": {"$lt": "b"}}, {"x": {"$lte": "b"}}, {"x": {"$gt": "a"}},
    {"$or": [{"x": {"$eq": "a"}}, {"l.t": {"$eq": "b"}}]},
    {"$and": [{"x": {"$ne": "a"}}, {"$nor": [{"l.t": {"$lt": "team-2"}}]}]},
    {"x": "a", "l.t": {"$ne": None}},
]


def _document(x, t):
    document = {"_id": 1}
    if x != "absent":
        document["x"] = x
    if t != "absent":
        document["l"] = {"t": t}
    return document


@pytest.mark.parametrize("query", QUERIES)
def test_a_row_matches_as_mongodb_matches_its_document(query):
    collection = mongomock_ng.MongoClient().db.rows
    test = row_test(query)
    assert test is not None and test.paths <= {"x", "l.t"}
    for x, t in itertools.product(VALUES, VALUES):
        collection.delete_many({})
        collection.insert_one(_document(x, t))
        row = {path: value for path, value in (("x", x), ("l.t", t)) if value != "absent"}
        assert test(row) == (collection.count_documents(query) == 1), (query, x, t)


@pytest.mark.parametrize("query", [
    {"x": {"$exists": True}}, {"x": {"$in": ["a"]}}, {"x": {"$lt": 3}}, {"x": {"$eq": 3}},
    {"$where": "1"}, {"x": {"$elemMatch": {"$eq": "a"}}}, {"$or": []}, {}])
def test_any_other_query_has_no_row_test(query):
    assert row_test(query) is None
