"""The embedded store survives its process: every write is journaled in the
data directory before its call returns and replayed by the next process
(inventory/embedded/journal.py). Store-level tests open a database over a
directory, write, drop it and open another over the same directory; the
served tests kill gunicorn's worker and the whole server."""
import copy
import datetime
import json
import logging
import math
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid

import bson
import mongomock_ng
import pytest
from bson import Decimal128, Int64, ObjectId, json_util
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from app import create_app
from inventory.config import Config
from inventory.core.errors import Unavailable
from inventory.embedded import appending
from inventory.embedded import encoding as journal_module
from inventory.embedded.data_directory import DataDirectoryInUse, JournalCorrupt
from inventory.embedded.database import _LOCK as database_lock
from inventory.embedded.database import LockedDatabase, _holders, embedded_database
from inventory.embedded.encoding import decode_snapshot_record, encode
from inventory.embedded.journal import Journal
from inventory.resources import store_classes
from inventory.resources.clusters.store import ClusterStore
from inventory.store import Store
from tests.conftest import ADMIN_TOKEN, Inventory, client_with
from tests.support.served import Gunicorn

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


def open_database(directory, fsync="no", **options):
    """A new embedded database over `directory`, as a new process opens it."""
    raw = mongomock_ng.MongoClient()["inventory"]
    return LockedDatabase(raw, Journal.open(str(directory), raw, fsync, **options))


def contents(database):
    """Every collection: its documents in stored order, and its indexes."""
    raw = database._database
    return copy.deepcopy({name: (list(raw[name]._store._documents.items()),
                                 raw[name]._store.indexes)
                          for name in sorted(raw.list_collection_names())})


def reopened(database, **options):
    """Close `database`'s journal; a new database over the same directory."""
    database.journal.close()
    return open_database(database.journal.directory, **options)


def make_app(directory):
    return create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN=ADMIN_TOKEN,
                             INVENTORY_DATA_DIR=str(directory), INVENTORY_FSYNC="no"))


def files(directory):
    """{name: (bytes, mtime)} of the directory's files but the lock (which
    holds its owner's pid)."""
    return {name: (open(directory / name, "rb").read(), os.stat(directory / name).st_mtime_ns)
            for name in sorted(os.listdir(directory)) if name != "lock"}


def test_every_write_through_the_api_survives_a_new_process(tmp_path):
    app = make_app(tmp_path)
    client = client_with(app, ADMIN_TOKEN)
    inventory = Inventory(client)
    org = inventory.org()
    platform = inventory.platform(org["id"])
    cluster = inventory.cluster(platform["name"], labels={"team": "a"})
    doomed = inventory.cluster(platform["name"])
    for i in range(5):
        inventory.scan(cluster["name"], 1_700_000_000 + i)
    assert client.patch(f"/kubeclusters/{cluster['name']}",  # a keyed update
                        json={"labels": {"team": "b"}}).status_code == 200
    inventory.scan(doomed["name"])
    assert client.delete(f"/kubeclusters/{doomed['name']}").status_code == 204  # and its scans
    token = client.post("/tokens", json={"name": "scanner", "role": "writer"}).get_json()
    revoked = client.post("/tokens", json={"name": "old", "role": "reader"}).get_json()
    assert client.delete(f"/tokens/{revoked['id']}").status_code == 204
    replayed = client.post("/organizations", json={"title": "Once"},
                           headers={"Idempotency-Key": "k-1"})
    assert replayed.status_code == 201
    page = client.get(f"/kubeclusters/{cluster['name']}/scans?limit=2").get_json()
    store = app.extensions["inventory.store"]
    before = contents(store.db)
    assert {"settings", "idempotency", "tokens", "scans"} <= set(before)

    again = make_app_after(app, tmp_path)
    store = again.extensions["inventory.store"]
    assert contents(store.db) == before
    client = client_with(again, ADMIN_TOKEN)
    assert client.get(f"/kubeclusters/{cluster['name']}").get_json()["labels"] == {"team": "b"}
    assert client.get(f"/kubeclusters/{doomed['name']}").status_code == 404
    assert len(client.get(f"/kubeclusters/{cluster['name']}/scans").get_json()["results"]) == 5
    assert client_with(again, revoked["token"]).get("/kubeclusters").status_code == 401
    # the token issued before works after, and so does a continuation token
    # (its signing key is in the data directory too)
    assert client_with(again, token["token"]).get("/kubeclusters").status_code == 200
    rest = client.get(f"/kubeclusters/{cluster['name']}/scans",
                      query_string={"limit": 2, "continue": page["pagination"]["continue"]})
    assert rest.status_code == 200 and len(rest.get_json()["results"]) == 2
    retried = client.post("/organizations", json={"title": "Once"},
                          headers={"Idempotency-Key": "k-1"})
    assert retried.headers["Idempotent-Replayed"] == "true"
    assert retried.get_json()["id"] == replayed.get_json()["id"]


def make_app_after(app, directory):
    app.extensions["inventory.store"].db.journal.close()
    return make_app(directory)


def test_every_collection_write_path_replays_to_equal_documents(tmp_path):
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


@pytest.mark.parametrize("writer", ["orjson", "json_util"])
def test_lines_are_json_utils_relaxed_extended_json(writer):
    """orjson writes and reads the plain JSON, json_util everything else (and
    whole lines holding null or infinities): a line reads back as json_util's
    own output does, type for type."""
    document = {"_id": ObjectId(), "t": True, "i": 1, "x": 1.0, "e": 1e16, "big": 2 ** 62,
                "u": "é\u2028", "none": None, "nan": float("inf"), "l": Int64(5),
                "d": Decimal128("1.5"), "at": datetime.datetime(2020, 1, 1, 0, 0, 0, 5000),
                "raw": b"ab", "nested": [1, [2, {"k": "v"}]], "pair": (1, 2)}
    if writer == "orjson":
        del document["none"], document["nan"]
    line = journal_module.encode([{"c": "x", "put": document}])
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    theirs = json_util.loads(json_util.dumps([{"c": "x", "put": document}],
                                             json_options=json_util.RELAXED_JSON_OPTIONS),
                             json_options=json_util.RELAXED_JSON_OPTIONS)
    ours = journal_module.decode(line)
    assert ours == theirs and json_util.loads(line) == theirs
    assert [type(v) for v in ours[0]["put"].values()] == \
        [type(v) for v in theirs[0]["put"].values()]


def test_a_line_with_nulls_and_no_infinities_is_orjsons(monkeypatch):
    """orjson writes None and NaN alike as null: a line holding null goes to
    json_util only when a float NaN or infinity is in it (issue 43: a
    document with a null field, common, was json_util's walk each write)."""
    document = {"_id": "k", "none": None, "nested": [1, {"also": None}], "pair": (None, 2.5)}
    real = json_util.dumps
    calls = []
    monkeypatch.setattr(journal_module.json_util, "dumps",
                        lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    line = journal_module.encode([{"c": "x", "put": document}])
    assert calls == []
    assert journal_module.decode(line) == [{"c": "x", "put": {**document, "pair": [None, 2.5]}}]
    for hidden in ({"deep": [{"x": float("nan")}], "none": None},
                   {"pair": (None, float("-inf"))}):
        line = journal_module.encode([{"c": "x", "put": hidden}])
        assert len(calls) == 1  # json_util writes them as {"$numberDouble": ...}
        calls.clear()
        assert line == real([{"c": "x", "put": hidden}],
                            json_options=journal_module._OPTIONS).encode() + b"\n"


def test_a_torn_last_line_is_dropped_with_a_warning(tmp_path, caplog):
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


def test_a_snapshot_holds_what_bson_cannot_and_keeps_the_types(tmp_path):
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


@pytest.mark.parametrize("value", [uuid.UUID("01a21164-a175-7565-9134-552fb9651064"),
                                   "lone \ud800 surrogate"])
def test_a_value_bson_refuses_other_than_by_type_still_compacts(tmp_path, value):
    """A UUID (no representation chosen) or a lone surrogate makes bson
    raise a ValueError, not a BSONError: the record is kept as its JSON line
    and the compaction succeeds (a failing one would be retried forever).
    The snapshot gives back what the journal's lines give back (a UUID
    comes back as its string from either)."""
    db = open_database(tmp_path)
    db.things.insert_one({"_id": "odd", "value": value})
    db.things.insert_one({"_id": "plain", "value": 1})
    db.journal.compact()  # the value as inserted, in memory
    assert db.journal.wait_for_compaction()
    assert any(name.endswith(".bson") for name in os.listdir(tmp_path))
    db = reopened(db)
    from_lines = str(value) if isinstance(value, uuid.UUID) else value
    assert db.things.find_one({"_id": "odd"})["value"] == from_lines
    assert db.things.find_one({"_id": "plain"})["value"] == 1
    db.journal.close()


def test_a_json_lines_snapshot_of_an_earlier_version_is_still_read(tmp_path):
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


def test_only_one_process_owns_a_data_directory(tmp_path):
    db = open_database(tmp_path)
    with pytest.raises(DataDirectoryInUse, match=rf"{tmp_path} is in use .*pid {os.getpid()}"):
        Journal(str(tmp_path), lock_wait=0.2)
    with pytest.raises(DataDirectoryInUse):  # the app does not start
        make_app(tmp_path)
    db.journal.close()
    Journal(str(tmp_path), lock_wait=0).close()  # free once its owner lets go


def test_a_killed_owner_frees_the_directory_for_the_next(tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys, time
        from inventory.embedded.database import LockedDatabase, _holders, embedded_database
        db = embedded_database("inventory", {str(tmp_path)!r}, "no")
        db.things.insert_one({{"_id": "acknowledged"}})
        print("ready", flush=True)
        time.sleep(60)
        """)], stdout=subprocess.PIPE, cwd=os.path.abspath(__file__).rsplit("/tests/", 1)[0])
    try:
        assert owner.stdout.readline() == b"ready\n"
        with pytest.raises(DataDirectoryInUse, match=f"pid {owner.pid}"):
            Journal(str(tmp_path), lock_wait=0)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        db = open_database(tmp_path)
        assert db.things.find_one({}) == {"_id": "acknowledged"}
    finally:
        owner.kill()
        owner.wait()


def test_compaction_then_more_writes_then_a_restart_gives_the_same_data(tmp_path):
    db = open_database(tmp_path)
    for i in range(50):
        db.things.insert_one({"_id": i, "v": "x" * 100})
    db.things.delete_many({"_id": {"$lt": 10}})
    db.things.create_index([("v", 1)])
    db.journal.compact()
    db.things.update_one({"_id": 20}, {"$set": {"v": "during"}})  # while the child writes
    assert db.journal.wait_for_compaction()
    db.things.insert_one({"_id": 100, "v": "after"})
    db.things.delete_one({"_id": 11})
    assert sorted(os.listdir(tmp_path)) == ["journal-000002.jsonl", "lock", "manifest.json",
                                            "snapshot-000002.bson"]
    before = contents(db)
    db = reopened(db)
    assert contents(db) == before
    assert dict(contents(db)["things"][0])[20]["v"] == "during"


@pytest.mark.slow
def test_a_compaction_merges_the_files_in_a_process_of_its_own_not_a_fork(
        tmp_path, monkeypatch):
    """The snapshot is what a start replaying the files would hold, in its
    order: over a BSON snapshot and the segment after it, with every kind of
    record (a document put again, deleted, put back; a dict `_id`; a value
    BSON cannot hold; indexes changed; a collection dropped and made again)."""
    def no_fork():
        raise AssertionError("a compaction forked")
    monkeypatch.setattr(os, "fork", no_fork)
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i, "v": str(i)} for i in range(20)])
    db.things.insert_one({"_id": {"a": 1, "b": 2}, "at": datetime.datetime(2020, 1, 1)})
    db.gone.insert_one({"_id": "x"})
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.things.update_one({"_id": 3}, {"$set": {"v": "three"}})
    db.things.delete_one({"_id": 4})
    db.things.insert_one({"_id": 4, "v": "back, last"})
    db.things.delete_one({"_id": {"a": 1, "b": 2}})
    db.things.insert_one({"_id": "big", "n": 2**70})
    db.things.create_index([("v", 1)])
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    db.gone.drop()
    db.gone.insert_one({"_id": "y"})
    db.things.update_one({"_id": 5}, {"$set": {"v": "in the segment being written"}})
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    assert sorted(os.listdir(tmp_path)) == ["journal-000004.jsonl", "lock", "manifest.json",
                                            "snapshot-000004.bson"]
    before = contents(db)
    db = reopened(db)
    assert contents(db) == before
    assert db.things.find_one({"_id": "big"})["n"] == 2**70
    assert [doc["_id"] for doc in db.gone.find()] == ["y"]
    db.journal.close()


def test_a_compaction_whose_merge_fails_is_done_again_from_memory(tmp_path, monkeypatch,
                                                                   caplog):
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i} for i in range(5)])
    monkeypatch.setattr(sys, "executable", "/bin/false")  # the merging process fails
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    assert "failed (exit status" in caplog.text
    assert not any(name.startswith("snapshot-") for name in os.listdir(tmp_path))
    db.things.insert_one({"_id": 5})
    db.journal.compact()  # a fork, which does not run sys.executable
    assert db.journal.wait_for_compaction()
    assert "snapshot-000003.bson" in os.listdir(tmp_path)
    before = contents(db)
    assert contents(reopened(db)) == before


def test_a_compaction_that_cannot_start_its_merge_forks(tmp_path, monkeypatch, caplog):
    db = open_database(tmp_path)
    db.things.insert_many([{"_id": i} for i in range(5)])
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python"))
    db.journal.compact()
    assert db.journal.wait_for_compaction()
    assert "could not start its merge" in caplog.text
    assert "snapshot-000002.bson" in os.listdir(tmp_path)
    before = contents(db)
    assert contents(reopened(db)) == before


def test_compaction_starts_by_itself_as_the_journal_grows(tmp_path):
    db = open_database(tmp_path, compact_at=20_000)
    for i in range(300):
        db.things.insert_one({"_id": i, "v": "x" * 100})  # about 40 KB of journal
    assert db.journal.wait_for_compaction()
    names = os.listdir(tmp_path)
    assert any(name.startswith("snapshot-") for name in names)
    assert "journal-000001.jsonl" not in names
    before = contents(db)
    assert contents(reopened(db)) == before


def test_an_append_that_fails_answers_unavailable_and_is_written_with_the_next(
        tmp_path, monkeypatch):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    journal, real_write = db.journal, os.write
    segment = tmp_path / "journal-000001.jsonl"
    size = segment.stat().st_size

    def disk_full(fd, data):
        if fd == journal.appending.fd:  # half a line reaches the file, then the disk is full
            real_write(fd, bytes(data[:5]))
            raise OSError(28, "No space left on device")
        return real_write(fd, data)
    monkeypatch.setattr(appending.os, "write", disk_full)
    with pytest.raises(Unavailable, match="No space left"):
        db.things.insert_one({"_id": 2})
    assert segment.stat().st_size == size  # the half line taken back
    with pytest.raises(Unavailable, match="No space left.* 1 refused writes wait"):
        db.command("ping")  # /readyz: 503 while writes are refused
    monkeypatch.setattr(appending.os, "write", real_write)
    db.journal.check(database_lock)  # the guard's round writes it without waiting for a write
    assert db.command("ping")["ok"] and segment.stat().st_size > size
    db.things.insert_one({"_id": 3})
    before = contents(db)
    assert sorted(dict(before["things"][0])) == [1, 2, 3]
    assert contents(reopened(db)) == before


def test_fsync_policies(tmp_path, monkeypatch):
    synced, real_fsync = [], os.fsync
    monkeypatch.setattr(appending.os, "fsync",
                        lambda fd: (synced.append(fd), real_fsync(fd))[1])
    db = open_database(tmp_path / "always", "always")
    count = len(synced)
    db.things.insert_one({"_id": 1})
    db.things.insert_one({"_id": 2})
    assert len(synced) == count + 2  # each write, before its call returned
    db.journal.close()

    db = open_database(tmp_path / "everysec", "everysec")
    count = len(synced)
    db.things.insert_one({"_id": 1})
    assert len(synced) == count  # not in the call...
    deadline = time.monotonic() + 3
    while len(synced) == count and time.monotonic() < deadline:
        time.sleep(0.05)
    assert db.journal.appending.fd in synced[count:]  # ...but within a second or so, by the thread
    db.journal.close()

    with pytest.raises(ValueError, match="INVENTORY_FSYNC"):
        Journal(str(tmp_path / "bad"), fsync="sometimes")


def test_memory_only_without_a_data_directory(monkeypatch):
    monkeypatch.delenv("INVENTORY_DATA_DIR", raising=False)
    assert Config().INVENTORY_DATA_DIR is None and not Config().journaled
    monkeypatch.setenv("INVENTORY_DATA_DIR", "")
    assert not Config().journaled
    monkeypatch.setenv("INVENTORY_DATA_DIR", ".data")
    assert Config().journaled and not Config(MONGODB_URI="mongodb://x").journaled
    store = Store(embedded_database("inventory"), store_classes())
    assert store.db.journal is None


# -- served: gunicorn as the Procfile runs it ---------------------------------

def journaled_gunicorn(directory):
    """gunicorn as the Procfile runs it, its store journaled in `directory`."""
    return Gunicorn(ADMIN_TOKEN, env={"INVENTORY_DATA_DIR": str(directory)},
                    log=directory.parent / "gunicorn-{port}.log", ready="/readyz")


def _write_estate(server, clusters=20, scans=5):
    """Records written over HTTP: what was acknowledged."""
    status, _, org = server.request("POST", "/organizations", {"title": "Acme"})
    assert status == 201
    assert server.request("POST", "/kubeplatforms", {
        "name": "p", "organization": org["id"], "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}})[0] == 201
    acknowledged = {"clusters": set(), "scans": set()}
    for i in range(clusters):
        status, _, cluster = server.request("POST", "/kubeclusters", {
            "name": f"c{i}", "platform": "p", "environment": "dev", "version": "1.30.0"})
        assert status == 201
        acknowledged["clusters"].add(cluster["name"])
        for j in range(scans):
            status, _, scan = server.request("POST", f"/kubeclusters/c{i}/scans",
                                          {"scanned_on": 1_700_000_000 + j})
            assert status == 201
            acknowledged["scans"].add(scan["id"])
    status, _, token = server.request("POST", "/tokens", {"name": "scanner", "role": "writer"})
    assert status == 201
    acknowledged["token"] = token["token"]
    return acknowledged


def _assert_all_there(server, acknowledged):
    assert server.request("GET", "/readyz")[0] == 200
    status, _, page = server.request("GET", "/kubeclusters?limit=100")
    assert status == 200
    assert {c["name"] for c in page["results"]} == acknowledged["clusters"]
    scans = set()
    for name in acknowledged["clusters"]:
        status, _, page = server.request("GET", f"/kubeclusters/{name}/scans?limit=100")
        scans |= {s["id"] for s in page["results"]}
    assert scans == acknowledged["scans"]
    assert server.request("GET", "/kubeclusters", token=acknowledged["token"])[0] == 200


@pytest.mark.slow
def test_served_kill_9_of_the_worker_and_a_restart_lose_no_acknowledged_write(tmp_path):
    directory = tmp_path / "data"
    server = journaled_gunicorn(directory)
    try:
        acknowledged = _write_estate(server)
        first = server.worker()
        os.kill(first, signal.SIGKILL)  # as an out-of-memory kill does
        deadline = time.monotonic() + 30
        while server.worker() == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.worker() != first
        server.wait_ready()
        _assert_all_there(server, acknowledged)
        # now: a scan from further ahead than the clocks' skew is refused
        status = server.request("POST", "/kubeclusters/c0/scans",
                                {"scanned_on": int(time.time())}).status
        assert status == 201  # the new worker owns the directory and writes on
        status, _, page = server.request("GET", "/kubeclusters/c0/scans?limit=100")
        acknowledged["scans"] |= {s["id"] for s in page["results"]}
    finally:
        server.stop()  # SIGTERM of the whole server
    assert server.process.returncode == 0
    server = journaled_gunicorn(directory)
    try:
        _assert_all_there(server, acknowledged)
    finally:
        server.stop()


def test_a_start_adds_missing_order_keys_only_when_the_orderings_changed(tmp_path, monkeypatch):
    """The start-up pass over every record (mongomock reads them all) runs
    when the declared order keys differ from those the last pass recorded."""
    app = make_app(tmp_path)
    Inventory(client_with(app, ADMIN_TOKEN)).cluster()
    database = app.extensions["inventory.store"].db
    field = next(f for f in database.clusters.find_one({}) if f.startswith("_order_"))
    database.clusters.update_many({}, {"$unset": {field: ""}})  # as before an ordering existed
    passes = []
    real = ClusterStore.add_missing_order_keys
    monkeypatch.setattr(ClusterStore, "add_missing_order_keys",
                        lambda self: passes.append(1) or real(self))
    app = make_app_after(app, tmp_path)  # the orderings recorded are today's: no pass
    assert passes == [] and field not in app.extensions["inventory.store"].db.clusters.find_one({})
    database = app.extensions["inventory.store"].db
    database.settings.update_one({"_id": "order-keys"}, {"$set": {"value.clusters": []}})
    app = make_app_after(app, tmp_path)  # a release that declares a new ordering
    assert passes == [1] and field in app.extensions["inventory.store"].db.clusters.find_one({})
    app = make_app_after(app, tmp_path)
    assert passes == [1]


def test_a_data_directory_whose_journal_was_deleted_does_not_start_empty(tmp_path):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    db.journal.close()
    (tmp_path / "journal-000001.jsonl").unlink()
    with pytest.raises(JournalCorrupt, match="journal-000001.jsonl is missing"):
        open_database(tmp_path)


def test_after_a_compaction_the_current_segment_is_the_one_required(tmp_path):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    db.journal.compact()
    db.journal.wait_for_compaction()
    db.things.insert_one({"_id": 2})
    db.journal.close()
    assert json.loads((tmp_path / "manifest.json").read_text())["current"] == 2
    again = open_database(tmp_path)
    assert sorted(d["_id"] for d in again.things.find()) == [1, 2]
    again.journal.close()
    (tmp_path / "journal-000002.jsonl").unlink()  # the snapshot alone would lose _id 2
    with pytest.raises(JournalCorrupt, match="journal-000002.jsonl is missing"):
        open_database(tmp_path)


def test_dates_decode_as_json_util_decodes_them_on_the_fast_path():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=500, deadline=None)
    @given(st.datetimes(min_value=datetime.datetime(1900, 1, 1),
                        max_value=datetime.datetime(9999, 12, 31)))
    def same(moment):
        moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)  # BSON's precision
        line = journal_module.encode([{"at": moment}])
        reference = json_util.loads(line, json_options=journal_module._OPTIONS)[0]["at"]
        assert journal_module.decode(line)[0]["at"] == reference == moment
    same()


def test_a_stalled_disk_stalls_the_writer_never_reads(tmp_path, monkeypatch):
    import threading

    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    journal, real_write = db.journal, os.write
    stalled, writing = threading.Event(), threading.Event()

    def stalling(fd, data):
        if fd == journal.appending.fd:  # the journal's disk freezes (a snapshot tool, a full device)
            writing.set()
            stalled.wait(30)
        return real_write(fd, data)
    monkeypatch.setattr(appending.os, "write", stalling)
    done = []
    writer = threading.Thread(target=lambda: done.append(db.things.insert_one({"_id": 2})))
    writer.start()
    assert writing.wait(5)
    started = time.monotonic()
    assert db.things.find_one({"_id": 1}) == {"_id": 1}  # reads go on meanwhile
    assert [d["_id"] for d in db.things.find({})] == [1, 2]  # (read-uncommitted, as Redis AOF)
    assert time.monotonic() - started < 1 and not done  # the writer still waits
    stalled.set()
    writer.join(10)
    assert done  # acknowledged once written
    monkeypatch.setattr(appending.os, "write", real_write)
    assert sorted(d["_id"] for d in reopened(db).things.find()) == [1, 2]


def test_a_writer_waits_for_its_line_itself_before_handing_the_wait_to_a_pool(
        tmp_path, monkeypatch):
    """A line is appended in tens of microseconds: the writer waits up to
    BRIEF_WAIT on its own thread (under gevent, the loop's) rather than
    handing every wait to a pool thread (three thread switches a write,
    issue 43). A stalled disk still gets a pool's wait: the test above."""
    db = open_database(tmp_path)
    handed = []
    real = appending.blocking
    monkeypatch.setattr(appending, "blocking",
                        lambda function, *args: handed.append(1) or real(function, *args))
    for n in range(60):
        db.things.insert_one({"_id": n})
    # the writer thread usually answers within BRIEF_WAIT: most writes wait
    # no pool (without the brief wait, nearly every one did: 1,196 of 1,200)
    assert len(handed) < 30
    db.journal.close()


def test_a_start_makes_the_caches_reads_would_make_under_the_lock(tmp_path):
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
    things = db.things
    assert things._keys == sorted(f"k{i:02d}" for i in range(1, 31))
    assert set(things._by_field) == {"parent"}  # not the internal order key
    lookup = things._by_field["parent"]
    warmed = {value: sorted(_holders(lookup, value)) for value in lookup}
    assert warmed == {f"p{n}": sorted(f"k{i:02d}" for i in range(1, 31) if i % 3 == n)
                      for n in range(3)}
    assert sorted(things._expiring) == sorted((now, f"k{i:02d}") for i in range(1, 31))
    things._by_field, things._keys, things._expiring = {}, None, None
    lookup = things._index_lookup("parent")
    assert {value: sorted(_holders(lookup, value)) for value in lookup} == warmed
    db.journal.close()
