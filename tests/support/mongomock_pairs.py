"""The embedded store's collections beside mongomock's own, for tests that
hold the one's answers to the other's (tests/unit/embedded/)."""
import mongomock_ng

from inventory.embedded.collection import LockedCollection

N = 300  # the documents of tests/unit/embedded/conftest.py's `things`
DOCS = [{"_id": "a", "x": 1, "_deleting": True, "nested": {"y": [1, 2]}},
        {"_id": "b", "x": 2, "organization": "o1", "_rev": "r1"},
        {"_id": "c", "x": 3, "organization": "o2", "_rev": "r2"}]


def pair():
    """Two collections with the same documents and a unique index on `u`:
    mongomock alone, and the embedded store's wrapper over another."""
    plain = mongomock_ng.MongoClient().db.things
    locked = LockedCollection(mongomock_ng.MongoClient().db.things)
    for collection in (plain, locked):
        collection.create_index([("u", 1)], unique=True)
        for i in range(20):
            collection.insert_one({"_id": f"k{i:02d}", "u": f"u{i}", "x": i,
                                   **({"_deleting": True} if i % 3 == 0 else {})})
    return plain, locked


def outcome(call):
    """What a call answered, or the name of what it raised: the same error,
    or the same answer."""
    try:
        result = call()
    except Exception as error:
        return type(error).__name__
    return getattr(result, "raw_result", result)
