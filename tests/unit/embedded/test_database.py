"""The embedded database (inventory/embedded/database.py): one locked
collection per name, and a ping that says whether the store takes writes."""
import copy

import mongomock_ng
import pytest

from inventory.core.errors import Unavailable
from inventory.embedded.database import LockedCollection, LockedDatabase, embedded_database


def test_a_collection_is_one_locked_collection_per_name():
    database = embedded_database("inventory")
    things = database["things"]
    assert isinstance(things, LockedCollection)
    assert database.things is things and database["things"] is things
    assert database["others"] is not things
    things.insert_one({"_id": "a"})
    assert database.things.find_one({"_id": "a"}) == {"_id": "a"}
    assert database.name == "inventory"


def test_a_private_name_is_no_collection():
    """copy and pickle probe `__deepcopy__`, `__setstate__` and the like
    with getattr, which reaches `__getattr__`: no collection for those, so a
    copy of the database is a database."""
    database = embedded_database("inventory")
    assert getattr(database, "__deepcopy__", None) is None
    with pytest.raises(AttributeError):
        database["_probe"]  # noqa: B018
    copied = copy.copy(database)
    assert copied.name == "inventory" and copied.things is database.things


class Refusing:
    """A journal that refuses writes (its disk is full, say)."""

    refusal = "the journal refuses writes"

    def track(self, name, collection):
        pass

    def committing(self, lock, name):
        return lock


def test_a_ping_answers_unless_the_journal_refuses_writes():
    memory = embedded_database("inventory")
    assert memory.command("ping")["ok"]
    refusing = LockedDatabase(mongomock_ng.MongoClient()["inventory"], Refusing())
    with pytest.raises(Unavailable, match="refuses writes"):
        refusing.command("ping")
