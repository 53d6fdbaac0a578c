"""The direct matcher (inventory/embedded/matching.py) answers as
mongomock's matcher does, document by document."""
from datetime import datetime

import pytest
from mongomock_ng.filtering import filter_applies

from inventory.embedded.matching import bounds, matcher

MATCHED_DOCS = [
    {"_id": "a"}, {"_id": "b", "team": "x"}, {"_id": "c", "team": "y"},
    {"_id": "d", "team": ["x", "z"]}, {"_id": "e", "team": []}, {"_id": "f", "team": None},
    {"_id": "g", "team": 1}, {"_id": "h", "team": {"x": 1}}, {"_id": "i", "team": [["x"]]},
    {"_id": "j", "team": "x", "_deleting": True}, {"_id": "k", "team": "x", "_deleting": None},
    {"_id": "l", "team": 2.5}, {"_id": "m", "team": float("nan")}, {"_id": "n", "team": True},
    {"_id": "o", "team": [1, 3]}, {"_id": "p", "team": -7}, {"_id": "q", "team": [None]},
    {"_id": "r", "team": [{"k": "a", "n": 1}, {"k": "b", "n": 2}]},
    {"_id": "s", "team": [{"n": 1, "k": "a"}, {"k": "b", "n": 2}]}, {"_id": "t", "team": [1.0, 3]},
    {"_id": "u", "team": [[1, 3], 4]}, {"_id": "v", "team": [True, 3]},
    # outboxes of whole records (compared in C where their form is plain JSON)
    {"_id": "w", "team": [{"k": "a", "at": datetime(2026, 1, 1), "o": {"v": [1, 2.5, "x"]}}]},
    {"_id": "x", "team": [None, {"n": float("nan")}]}, {"_id": "y", "team": [{"n": 2**70}]},
    {"_id": "z", "team": [{"a": True}, {"b": 1}]}, {"_id": "za", "team": [{"o": {"v": [1, 2]}}]},
]


MATCHED_QUERIES = [
    {}, {"team": "x"}, {"team": ""}, {"team": {"$exists": True}}, {"team": {"$exists": False}},
    {"team": "x", "_deleting": {"$exists": False}}, {"_id": "b", "team": "x"},
    {"_id": {"$gt": "b"}, "team": "x"}, {"_id": {"$gt": "b", "$gte": "c"}},
    {"_id": {"$gt": 1}}, {"team": {"$exists": 1}}, {"team.x": 1}, {"team": {"$ne": "x"}},
    {"team": 1}, {"$or": [{"team": "x"}]},
    {"team": {"$eq": "x"}}, {"team": {"$lt": "y"}}, {"team": {"$gte": "x", "$lt": "y"}},
    {"team": {"$gt": ""}}, {"team": {"$lte": "x"}, "_deleting": {"$exists": False}},
    {"$and": [{"team": {"$gte": "x"}}, {"team": {"$lt": "y"}}]},
    {"$and": [{"_id": {"$gt": "b"}}, {"_id": {"$lt": "h"}}], "team": "x"},
    {"$and": [{"team": "x"}, {"$or": [{"_id": "b"}]}]},
    {"team": {"$lt": "y", "$ne": "x"}}, {"team": {"$in": ["x"]}},
    # numbers and null, as a scan's time is raised (`last_scanned_on`)
    {"team": None}, {"team": {"$lt": 2}}, {"team": {"$gte": 1, "$lt": 2.5}},
    {"team": {"$gt": -10.5}}, {"team": {"$eq": 1}}, {"team": {"$lte": 2.5}},
    {"$or": [{"team": None}, {"team": {"$lt": 5}}]}, {"team": {"$lt": float("nan")}},
    {"team": {"$gt": True}}, {"team": {"$gt": 0}, "_deleting": {"$exists": False}},
    # an array read back, as the outbox is cleared
    {"team": [{"k": "a", "n": 1}, {"k": "b", "n": 2}]}, {"_id": "r", "team": [{"k": "a", "n": 1}]},
    {"team": [1, 3]}, {"team": [1.0, 3]}, {"team": []}, {"team": ["x", "z"]}, {"team": [["x"]]},
    {"team": [None]}, {"_id": {"$gt": "a"}, "team": [1, 3], "_deleting": {"$exists": False}},
    {"$or": [{"team": [1, 3]}, {"team": "x"}]},
    {"team": [{"k": "a", "at": datetime(2026, 1, 1), "o": {"v": [1, 2.5, "x"]}}]},
    {"team": [{"k": "a", "at": datetime(2026, 1, 2), "o": {"v": [1, 2.5, "x"]}}]},
    {"team": [None, {"n": None}]}, {"team": [None, {"n": float("nan")}]},
    {"team": [{"n": 2**70}]}, {"team": [{"n": 2**70 + 1}]}, {"team": [{"a": 1}, {"b": True}]},
    {"team": [{"a": True}, {"b": 1}]}, {"team": [{"o": {"v": [1, 2]}}]},
    {"team": [{"o": {"v": [1.0, 2]}}]}, {"team": [{"o": {"v": [2, 1]}}]},
]


@pytest.mark.parametrize("walked", [False, True])
@pytest.mark.parametrize("query", MATCHED_QUERIES)
def test_the_direct_matcher_agrees_with_mongomock(query, walked):
    """Every document against every query; on a walk, `_id` bounds are the
    walk's own, so only documents inside them are asked about."""
    lower, lower_inclusive, upper, upper_inclusive = bounds(query)
    matches = matcher(query, walked="_id" if walked else None)
    for document in MATCHED_DOCS:
        if walked and lower is not None and not (
                document["_id"] >= lower if lower_inclusive else document["_id"] > lower):
            continue
        assert matches(document) == filter_applies(query, document), document


MATCH_DOCS = [
    {"_id": "a", "e": "prod", "d": "eks", "v": "0001.0029.000001"},
    {"_id": "b", "e": "dev", "d": "gke", "v": "0001.0031.000000", "x": None},
    {"_id": "c", "e": ["prod", "dev"], "d": "eks", "v": "0001.0036.000002"},
    {"_id": "d", "d": "aks", "v": 5, "_deleting": True},
    {"_id": "e", "e": "staging", "d": {"nested": "eks"}, "v": "0001.0018.000000"},
    {"_id": "f", "e": "prod"},
]


TREE_QUERIES = [
    {"$or": [{"d": {"$eq": "eks"}, "v": {"$gte": "0001.0030.000000", "$lt": "0001.0037.000000"}},
             {"d": {"$eq": "gke"}}]},
    {"$nor": [{"e": "prod"}]},
    {"$nor": [{"$or": [{"e": "dev"}, {"d": {"$eq": "aks"}}]}], "_deleting": {"$exists": False}},
    {"$and": [{"$or": [{"v": {"$lt": "0001.0030.000000"}}, {"x": {"$exists": True}}]},
              {"$nor": [{"d": "gke"}]}]},
    {"$or": [{"e": {"$gte": "p", "$lt": "q"}}, {"v": {"$gt": "0001.0035.000000"}}]},
    {"$or": [{"d": {"$eq": "eks"}}, {"labels.team": "a"}]},  # a dotted path through objects
    {"d.nested": "eks"}, {"d.nested": {"$exists": True}}, {"d.nested": {"$exists": False}},
    {"d.nested": None}, {"e.x": "prod"}, {"e.0": "prod"}, {"v.x": {"$lt": 9}},
    {"$nor": [{"d.nested": {"$gte": "e"}}]}, {"d.nested.deeper": {"$exists": False}},
    {"$or": [{"e": {"$ne": "prod"}}]},  # $ne: mongomock
    {"$nor": [{"v": {"$gte": "0001.0019.000000", "$lt": "0001.0037.000000"}}]},
]


@pytest.mark.parametrize("query", TREE_QUERIES)
def test_or_and_not_trees_match_as_mongomock_does(query):
    matches = matcher(query)
    for document in MATCH_DOCS:
        assert matches(document) == filter_applies(query, document), (query, document)
