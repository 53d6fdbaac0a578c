"""A start replays the data directory (inventory/embedded/replay.py): every
write path gives back equal documents, in their order, with their indexes;
a torn last line is dropped with a warning; any other line or snapshot
record that cannot be read stops the start, naming it, and changes
nothing; a snapshot of an earlier version (JSON lines) is still read."""
import datetime
import logging
import math
import os
import time

import bson
import pytest
from bson import ObjectId
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from app import create_app
from inventory.config import Config
from inventory.embedded.data_directory import JournalCorrupt
from inventory.embedded.encoding import decode_snapshot_record, encode
from tests.support.journaled import files, open_database, reopened

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


def test_every_collection_write_path_replays_to_equal_documents(tmp_path, contents):
    db = open_database(tmp_path)
    things = db.things
    things.create_index([("name", 1)], unique=True)
    things.create_index([("at", 1)], expireAfterSeconds=3600)
    moment = datetime.datetime(2100, 11, 23, 12, 30, 15, 123000)  # not expired by the TTL
    oid = things.insert_one({"name": "no-id", "n": 1, "x": 1.0}).inserted_id  # an ObjectId
    assert isinstance(oid, ObjectId)
    things.insert_one({"_id": "a", "name": "a", "n": 2, "at": moment, "nested": {"l": [1, 2.5]}})
    things.insert_one({"_id": "b", "name": "b", "n": 3, "big": 2 ** 62, "none": None,
                       "nan": float("nan"), "raw": b"\x00\xff"})
    things.insert_one({"_id": "c", "name": "c", "n": 4})
    things.update_one({"_id": "a"}, {"$set": {"nested.m": "x"}, "$unset": {"n": ""}})  # keyed
    assert things.find_one_and_update({"_id": "b"}, {"$set": {"n": 30}},
                                      return_document=ReturnDocument.AFTER)["n"] == 30
    things.update_many({"n": {"$gte": 1}}, {"$inc": {"n": 100}})  # mongomock's own path
    things.update_one({"name": "c"}, {"$push": {"tags": "t"}})  # unkeyed, a new array
    things.find_one_and_update({"_id": "up"}, {"$setOnInsert": {"name": "up"}}, upsert=True)
    things.delete_one({"_id": "c"})  # keyed
    things.insert_one({"_id": "d", "name": "d"})
    things.delete_many({"name": {"$in": ["d"]}})  # unkeyed
    db.other.insert_many([{"_id": i, "i": i} for i in range(5)])
    db.other.delete_one({"i": 3})  # unkeyed delete_one
    db.gone.insert_one({"_id": 1})
    db.gone.drop()
    db.gone.insert_one({"_id": 2})
    with pytest.raises(DuplicateKeyError):  # refused writes: mongomock puts things back
        things.insert_one({"_id": "e", "name": "a"})
    with pytest.raises(DuplicateKeyError):
        things.update_one({"_id": "b"}, {"$set": {"name": "a"}})
    before = contents(db)

    db = reopened(db)
    after = contents(db)
    assert math.isnan(dict(after["things"][0])["b"].pop("nan"))  # equal to nothing: apart
    assert math.isnan(dict(before["things"][0])["b"].pop("nan"))
    assert after == before  # every collection: documents, their order, indexes
    stored = dict(after["things"][0])
    assert type(stored[oid]["x"]) is float and type(stored[oid]["n"]) is int
    assert stored["a"]["at"] == moment and stored["b"]["raw"] == b"\x00\xff"
    assert stored["b"]["big"] == 2 ** 62 and stored["b"]["none"] is None
    assert dict(after["gone"][0]) == {2: {"_id": 2}}
    with pytest.raises(DuplicateKeyError):  # the unique index came back with the data
        db.things.insert_one({"name": "a"})


def test_a_torn_last_line_is_dropped_with_a_warning(tmp_path, caplog, contents):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1, "v": "kept"})
    before = contents(db)
    db.journal.close()
    segment = tmp_path / "journal-000001.jsonl"
    whole = segment.read_bytes()
    with open(segment, "ab") as out:  # a crash in the middle of writing a line
        out.write(b'[{"c":"things","put":{"_id":2,"v":"nev')
    caplog.set_level(logging.WARNING, logger="inventory.embedded.journal")
    db = open_database(tmp_path)
    assert contents(db) == before
    warning = [r for r in caplog.records if r.name == "inventory.embedded.journal"]
    assert len(warning) == 1 and warning[0].levelno == logging.WARNING
    torn_line = f"{segment} line {len(whole.splitlines()) + 1},"
    assert torn_line in warning[0].getMessage()
    assert segment.read_bytes() == whole  # cut off, so the next write follows a whole line
    db.things.insert_one({"_id": 3, "v": "after"})
    assert dict(contents(reopened(db))["things"][0]) == {1: {"_id": 1, "v": "kept"},
                                                          3: {"_id": 3, "v": "after"}}


@pytest.mark.parametrize("damage", ["garbage", "not a record", "cut short in the middle"])
def test_a_corrupt_line_before_the_end_stops_the_start_and_changes_nothing(tmp_path, damage):
    db = open_database(tmp_path)
    for i in range(4):
        db.things.insert_one({"_id": i})
    db.journal.close()
    segment = tmp_path / "journal-000001.jsonl"
    lines = segment.read_bytes().splitlines(keepends=True)
    lines[2] = {"garbage": b'[{"c":"things","put":{"_id":1}\n',
                "not a record": b'[{"c":"things","replace":{"_id":1}}]\n',
                "cut short in the middle": b'[{"c":"things"'}[damage]
    segment.write_bytes(b"".join(lines))
    (tmp_path / "manifest.json").unlink()  # (its sizes would refuse a shorter file first)
    (tmp_path / "snapshot-000003.jsonl.tmp").write_bytes(b"an unfinished compaction")
    untouched = files(tmp_path)
    time.sleep(0.01)
    with pytest.raises(JournalCorrupt, match=f"{segment} line 3 "):
        open_database(tmp_path)
    assert files(tmp_path) == untouched
    with pytest.raises(JournalCorrupt, match="line 3"):  # and the lock was let go
        create_app(Config(TESTING=True, INVENTORY_DATA_DIR=str(tmp_path)))
    assert files(tmp_path) == untouched


def test_a_snapshot_cut_short_stops_the_start(tmp_path):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    db.journal.compact()
    db.journal.wait_for_compaction()
    db.journal.close()
    snapshot = tmp_path / "snapshot-000002.bson"
    snapshot.write_bytes(snapshot.read_bytes()[:-3])  # only a journal's last line may be torn
    (tmp_path / "manifest.json").unlink()  # (its sizes would refuse the shorter file first)
    with pytest.raises(JournalCorrupt, match=f"{snapshot} record 2 is not a snapshot record"):
        open_database(tmp_path)


def test_a_snapshot_holds_what_bson_cannot_and_keeps_the_types(tmp_path, contents):
    """Snapshots are BSON; a record BSON cannot encode (an integer past 64
    bits) is kept as its JSON line, and datetimes come back naive UTC."""
    db = open_database(tmp_path)
    when = datetime.datetime(2026, 11, 25, 6, 28, 51, 347000)
    db.things.insert_one({"_id": "big", "n": 2**70, "nested": {"list": [1, "a", None]}})
    db.things.insert_one({"_id": "time", "at": when, "float": 0.5, "flag": True})
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    before = contents(db)
    db = reopened(db)
    assert contents(db) == before
    assert db.things.find_one({"_id": "big"})["n"] == 2**70
    assert db.things.find_one({"_id": "time"})["at"] == when


def test_a_json_lines_snapshot_of_an_earlier_version_is_still_read(tmp_path, contents):
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i, "v": str(i)} for i in range(5)])
    db.things.create_index([("v", 1)])
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.things.delete_one({"_id": 3})  # in the segment after the snapshot
    before = contents(db)
    db.journal.close()
    snapshot = tmp_path / "snapshot-000002.bson"
    with open(snapshot, "rb") as documents:
        records = [record for document in bson.decode_file_iter(documents)
                   for record in decode_snapshot_record(document)]
    (tmp_path / "snapshot-000002.jsonl").write_bytes(b"".join(encode([r]) for r in records))
    snapshot.unlink()
    (tmp_path / "manifest.json").unlink()  # what an earlier version wrote instead
    (tmp_path / "current-segment").write_text("2\n")
    db = open_database(tmp_path)
    assert contents(db) == before
    assert "v_1" in db.things.index_information()


def test_a_missing_segment_stops_the_start(tmp_path):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    db.journal.compact()
    db.journal.wait_for_compaction()
    db.things.insert_one({"_id": 2})
    db.journal.compact()
    db.journal.wait_for_compaction()
    db.journal.close()
    (tmp_path / "journal-000003.jsonl").rename(tmp_path / "journal-000004.jsonl")
    with pytest.raises(JournalCorrupt, match="journal-000003.jsonl is missing"):
        open_database(tmp_path)
