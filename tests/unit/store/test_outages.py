"""The database's outages as a process sees them (inventory/store/outages.py):
each said once when it begins and once when it ends, whatever the calls
that fail meanwhile; background work tries again quietly. Served, with the
database really away at start: tests/system/test_database_outage.py."""
import logging

import pymongo.errors
import pytest

from inventory.core.errors import Unavailable
from inventory.store.connection import Guarded
from inventory.store.outages import background


class Server:
    """Stands in for a pymongo collection: away or answering, at will."""

    away = True

    def find_one(self, *_args):
        if self.away:
            raise pymongo.errors.ServerSelectionTimeoutError(
                "127.0.0.1:1: [Errno 111] Connection refused, Timeout: 0.1s, Topology "
                "Description: <TopologyDescription ...>")
        return {"_id": "x"}

    def insert_one(self, *_args):
        raise pymongo.errors.DuplicateKeyError("E11000")  # a refusal is an answer


def test_an_outage_is_said_once_when_it_begins_and_once_when_it_ends(caplog):
    caplog.set_level(logging.INFO)
    server = Server()
    collection = Guarded(server)
    for _ in range(2):  # two outages
        for _ in range(5):
            with pytest.raises(Unavailable):
                collection.find_one({})
        server.away = False
        for _ in range(3):
            assert collection.find_one({}) == {"_id": "x"}
        server.away = True
    assert caplog.text.count("The database cannot be reached") == 2
    assert caplog.text.count("The database answers again") == 2
    assert "Connection refused" in caplog.text and "Topology" not in caplog.text


def test_a_refusal_by_the_server_ends_an_outage(caplog):
    server = Server()
    collection = Guarded(server)
    with pytest.raises(Unavailable):
        collection.find_one({})
    with pytest.raises(pymongo.errors.DuplicateKeyError):
        collection.insert_one({})
    assert collection.outage.since is None
    assert caplog.text.count("The database answers again") == 1


def test_what_a_database_hands_out_shares_its_outage():
    database = Guarded(pymongo.MongoClient("mongodb://127.0.0.1:1", connect=False)["db"])
    assert database["settings"].outage is database.outage is database.settings.outage


def test_background_work_tries_again_quietly_while_the_store_is_away(caplog):
    with background("Sweeping things"):
        raise Unavailable()
    assert caplog.text == ""  # the outage's own line says it, once
    with background("Sweeping things"):
        raise ValueError("a bug")
    assert "Sweeping things failed; trying again later." in caplog.text
    assert "ValueError: a bug" in caplog.text
