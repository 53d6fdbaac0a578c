"""The embedded store's warm after a start that answers first
(`LockedDatabase.warm_in_turns`): the same caches as a warm at start, one
pass per turn of the lock, writes between the passes kept."""
import datetime
import os

import pytest

from inventory.embedded import lock
from inventory.embedded.database import embedded_database

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the embedded store's")


def estate(directory):
    db = embedded_database("inventory", str(directory), "no")
    db.things.create_index([("parent", 1)])
    db.things.create_index([("name", 1)])
    db.things.create_index([("_order_name", 1)])
    db.things.create_index([("at", 1)], expireAfterSeconds=3600)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    db.things.insert_many([{"_id": f"k{i:02d}", "parent": f"p{i % 3}", "name": f"n{i}",
                            "_order_name": str(i), "at": now} for i in range(30, 0, -1)])
    db.journal.close()


def test_a_start_left_unwarmed_is_warmed_in_turns_one_pass_each(tmp_path, caches,
                                                                 monkeypatch):
    estate(tmp_path)
    db = embedded_database("inventory", str(tmp_path), "no", warm=False)
    things = db.things
    assert caches(things) == {"keys": None, "lookups": {}, "expiring": None}
    turns = []

    def others_run():
        # between two passes: the lock is free, and a writer may write
        assert not lock.LOCK.held_once()
        turns.append(caches(things))
        if len(turns) == 3:
            things.insert_one({"_id": "k99", "parent": "p0", "name": "between",
                               "_order_name": "99"})
    monkeypatch.setattr(lock, "yield_to_others", others_run)
    db.warm_in_turns()
    # one pass a turn: the name's lookup, the parent's, the expiry heap, the key order
    assert [sorted(turn["lookups"]) for turn in turns] == [
        ["name"], ["name", "parent"], ["name", "parent"], ["name", "parent"]]
    assert [turn["expiring"] is not None for turn in turns] == [False, False, True, True]
    assert [turn["keys"] is not None for turn in turns] == [False, False, False, True]
    assert [doc["_id"] for doc in things.find({"parent": "p0"})][-1] == "k99"
    warmed_in_turns = caches(things)
    db.journal.close()
    warmed_at_start = caches(embedded_database("inventory", str(tmp_path), "no").things)
    assert warmed_in_turns == warmed_at_start
    assert "k99" in warmed_at_start["lookups"]["parent"]["p0"]


def test_a_start_makes_the_caches_reads_would_make_under_the_lock(tmp_path, caches):
    """embedded_database warms each collection before anything is served:
    the key order, the lookups of the API's indexed fields and the expiry
    heap are there, and equal to what first use would have made."""
    db = embedded_database("inventory", str(tmp_path), "no")
    db.things.create_index([("parent", 1)])
    db.things.create_index([("_order_name", 1)])
    db.things.create_index([("at", 1)], expireAfterSeconds=3600)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    db.things.insert_many([{"_id": f"k{i:02d}", "parent": f"p{i % 3}", "_order_name": str(i),
                            "at": now} for i in range(30, 0, -1)])
    db.journal.close()
    db = embedded_database("inventory", str(tmp_path), "no")
    made = caches(db.things)
    assert made["keys"] == sorted(f"k{i:02d}" for i in range(1, 31))
    assert set(made["lookups"]) == {"parent"}  # not the internal order key
    assert made["lookups"]["parent"] == {
        f"p{n}": sorted(f"k{i:02d}" for i in range(1, 31) if i % 3 == n) for n in range(3)}
    assert made["expiring"] == sorted((now, f"k{i:02d}") for i in range(1, 31))
    db.journal.close()
    db = embedded_database("inventory", str(tmp_path), "no", warm=False)  # first use makes them
    assert [doc["_id"] for doc in db.things.find({"parent": "p1"})]
    assert caches(db.things)["lookups"]["parent"] == made["lookups"]["parent"]
    db.journal.close()
