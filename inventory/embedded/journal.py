"""Persistence for the embedded store: every accepted write appended to a
journal in INVENTORY_DATA_DIR before the call returns, replayed when a
process starts, compacted into a snapshot as it grows.

The design, and why: docs/design/journal.md"""
import atexit
import collections
import contextlib
import datetime
import fcntl
import gc
import importlib
import logging
import math
import mmap
import os
import re
import signal
import sys
import time

import bson
import bson.raw_bson
import orjson
from bson import json_util
from bson.codec_options import CodecOptions
from bson.errors import BSONError

from inventory.core.errors import Unavailable
from inventory.embedded import mongomock_internals
from inventory.embedded.untracked import untrack

log = logging.getLogger(__name__)

FSYNC_POLICIES = ("always", "everysec", "no")
# Compact when the segments since the snapshot reach this, or a quarter of
# the snapshot if larger (Redis' auto-aof-rewrite-min-size and -percentage).
COMPACT_AT = 64 * 1024 * 1024
# How long a start waits for a previous owner of the directory to exit
# (gunicorn overlaps old and new workers on a reload) before refusing.
LOCK_WAIT = 10.0
# How long a writer waits for its line on its own thread (under gevent, the
# loop's) before a pool thread waits instead: `Journal.written`.
BRIEF_WAIT = 0.0005
_OPTIONS = json_util.RELAXED_JSON_OPTIONS
_ORJSON = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
# What the next start must find, rewritten as the files change (its checks:
# _refuse_on_evidence_of_loss). `current-segment`, which an earlier version
# wrote instead, is still read when there is no manifest.
MANIFEST = "manifest.json"
CURRENT = "current-segment"
# How often the guard checks that the files are those this process wrote.
GUARD_EVERY = 1.0
# How long a stop waits for the snapshot a fault started (gunicorn's graceful timeout is 30 s).
CLOSE_WAIT = 20.0
# Seconds between attempts to write a snapshot after a fault, doubling up to the last.
RETRY_BACKOFF = (1.0, 30.0)
_FILE = re.compile(r"(snapshot|journal)-(\d+)\.(jsonl|bson)\Z")
# Snapshots are BSON, which pymongo's C extension decodes 3-4 times as fast
# as the journal's JSON lines and their types (a start at a million records
# is mostly this). A snapshot written as JSON lines by an earlier version is
# still read. Datetimes come back naive UTC, as the JSON lines' do.
_BSON_OPTIONS = CodecOptions(tz_aware=False)
_DictStore = mongomock_internals.DocumentsDict  # what mongomock keeps a collection's documents in


class DataDirectoryInUse(RuntimeError):
    """Another process owns the data directory."""


class JournalCorrupt(RuntimeError):
    """A journal or snapshot line cannot be read, or data the directory held
    is gone; nothing was changed."""


def _identity(stat):
    return stat.st_ino, stat.st_dev


# -- the format ------------------------------------------------------------

def _default(value):
    """Extended JSON of what orjson leaves alone (datetimes, ObjectIds,
    bytes, subclasses of str/int such as bson's)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return json_util.default(value, _OPTIONS)


def encode(records):
    """One line of relaxed extended JSON, as `json_util.dumps` writes it."""
    try:
        line = orjson.dumps(records, default=_default, option=_ORJSON)
        # orjson writes NaN and infinities as null, as it writes None: only
        # those go to json_util (a document with a null field is common, and
        # json_util's walk in Python cost a scan's POST some 150 us a write)
        if b"null" not in line or not _non_finite_in(records):
            return line + b"\n"
    except (orjson.JSONEncodeError, TypeError):
        pass
    return json_util.dumps(records, json_options=_OPTIONS).encode() + b"\n"


def _non_finite_in(value):
    """Whether a float NaN or infinity is anywhere in `value` (dicts, lists, tuples)."""
    if value.__class__ is float:
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_non_finite_in(inner) for inner in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite_in(inner) for inner in value)
    return False


_DATE_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")


def _date(text):
    """The naive UTC datetime json_util makes of `{"$date": text}`, for the
    form it writes (milliseconds, Z): at start, a million of them take
    seconds through its strptime, and well under one through fromisoformat."""
    if _DATE_RE.match(text):
        return datetime.datetime.fromisoformat(text[:-1])
    return json_util.object_hook({"$date": text}, _OPTIONS)


def _decoded(value):
    """`value` with json_util's object hook applied to every object, bottom up."""
    if isinstance(value, list):
        return [_decoded(item) if isinstance(item, (dict, list)) else item for item in value]
    for key, inner in value.items():
        if isinstance(inner, (dict, list)):
            value[key] = _decoded(inner)
    if len(value) == 1 and isinstance(value.get("$date"), str):
        return _date(value["$date"])
    return json_util.object_hook(value, _OPTIONS)


def encode_snapshot_record(record):
    """One snapshot record as BSON; one BSON cannot hold (an integer past 64
    bits, a key with a NUL, a UUID without a representation, a lone
    surrogate) is wrapped as its JSON line."""
    try:
        return bson.encode(record)
    except (BSONError, OverflowError, ValueError, TypeError):  # UnicodeEncodeError too
        return bson.encode({"line": encode([record])})


def decode_snapshot_record(document):
    """The records of one snapshot document."""
    return decode(document["line"]) if "line" in document else [document]


def decode(line):
    """The records of one line (orjson for the syntax, json_util for the types)."""
    try:
        records = orjson.loads(line)
    except orjson.JSONDecodeError:
        return json_util.loads(line, json_options=_OPTIONS)
    # only an object with a key starting with `$` can be extended JSON
    return _decoded(records) if b'"$' in line else records


_key = mongomock_internals.document_key


# -- gevent, when it is there ----------------------------------------------

def _original(module, name):
    """The unpatched `module.name` when gevent has patched it, else itself."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched(module):
        return monkey.get_original(module, name)
    return getattr(importlib.import_module(module), name)


def _blocking(function, *args):
    """Call `function`; under gevent, in the hub's thread pool, so that only
    the calling greenlet waits."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched("threading"):
        import gevent
        return gevent.get_hub().threadpool.apply(function, args)
    return function(*args)


# -- tracking --------------------------------------------------------------

class _Tracked(_DictStore):
    """A collection's documents by `_id`, noting every key set or removed."""

    def __init__(self, documents=()):
        self.dirty = {}  # keys, in the order first touched
        super().__init__(documents)
        self.dirty = {}  # (what it starts with is not a change)

    def __setitem__(self, key, value):
        _DictStore.__setitem__(self, key, value)
        self.dirty[key] = None

    def __delitem__(self, key):
        _DictStore.__delitem__(self, key)
        self.dirty[key] = None

    def pop(self, key, *default):
        self.dirty[key] = None
        return _DictStore.pop(self, key, *default)

    def popitem(self, last=True):
        key, value = _DictStore.popitem(self, last)
        self.dirty[key] = None
        return key, value

    def setdefault(self, key, default=None):
        self.dirty[key] = None
        return _DictStore.setdefault(self, key, default)

    def update(self, *args, **kwargs):
        for key, value in dict(*args, **kwargs).items():
            self[key] = value

    def clear(self):
        self.dirty.update(dict.fromkeys(self))
        _DictStore.clear(self)


class _Committing:
    """The store's lock; on leaving it, the journal writes what a write to
    one collection changed (a write changes its own collection only)."""

    def __init__(self, lock, journal, name):
        self._lock, self._journal, self._name = lock, journal, name

    def __enter__(self):
        self._lock.acquire()

    def __exit__(self, *exc):
        try:
            queued = self._journal.commit(self._name)  # in order, under the lock
        finally:
            self._lock.release()
        if queued is not None:  # written outside it: a stalled disk stalls writers only
            self._journal.written(queued)


class Journal:
    """The data directory of one embedded database, owned by this process."""

    def __init__(self, directory, fsync="everysec", compact_at=COMPACT_AT, lock_wait=LOCK_WAIT):
        if fsync not in FSYNC_POLICIES:
            raise ValueError(f"INVENTORY_FSYNC is {fsync!r}; it must be one of "
                             f"{', '.join(FSYNC_POLICIES)}.")
        self.directory = os.path.abspath(directory)
        self.fsync, self.compact_at = fsync, compact_at
        self._stores = {}  # name: mongomock's store of a collection, its documents _Tracked
        self._indexes = {}  # name: the index definitions last recorded
        self._fd = self._lock_fd = None
        self._sizes = {}  # segment number: bytes, from the snapshot's on
        self._snapshot, self._snapshot_size = 0, 0
        self._snapshot_path = None
        self._next_compaction = compact_at
        self._child = None  # (pid, snapshot number) of a compaction running
        self._from_memory = False  # the next compaction forks: a merge of the files failed
        self._written = False  # appended since the last fsync
        self._failure = None  # why appends are refused (a fault): until a snapshot is written
        self._recoverable = True  # False: refused until a restart (another process owns the dir)
        self._recovering = False  # the child running writes the snapshot that ends a fault
        self._retry_at, self._backoff = 0.0, RETRY_BACKOFF[0]
        # {path: (inode, device, bytes)} of the snapshot and ended segments the
        # next start reads, as this process left them (the guard compares)
        self._files = {}
        self._durable = (0, 0)  # (segment, bytes of it known fsynced)
        self._recorded = None  # the _durable the manifest last recorded
        self._file_mutex = _original("_thread", "allocate_lock")()  # appends vs. inspections
        self._manifest_mutex = _original("_thread", "allocate_lock")()  # its writes, in order
        self._retired = []  # descriptors of ended segments, for the syncing thread to close
        self._closed = self._closing = False
        # {"fsync_ms", "total_ms"} the last compaction (or a fault's snapshot) held the lock
        self.last_pause = None
        os.makedirs(self.directory, exist_ok=True)
        self._lock(lock_wait)
        self._sync_lock = _original("_thread", "allocate_lock")()
        self._queue = collections.deque()  # [line, done, error]: lines the writer thread appends
        self._queue_mutex = _original("_thread", "allocate_lock")()
        self._work = _original("_thread", "allocate_lock")()  # released: the queue has work
        self._unwritten = []  # lines that failed: written first by the next that can be
        self._unwritten_because = None  # why the first of them failed
        self._segment = 0  # the segment appended to

    # -- opening -------------------------------------------------------------

    def _path(self, kind, number, extension=None):
        extension = extension or ("bson" if kind == "snapshot" else "jsonl")
        return os.path.join(self.directory, f"{kind}-{number:06d}.{extension}")

    def _lock(self, wait):
        self._lock_fd = os.open(os.path.join(self.directory, "lock"), os.O_RDWR | os.O_CREAT, 0o644)
        deadline, warned = time.monotonic() + wait, False
        while True:
            try:
                fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                owner = os.pread(self._lock_fd, 32, 0).decode(errors="replace").strip() or "?"
                if time.monotonic() >= deadline:
                    os.close(self._lock_fd)
                    raise DataDirectoryInUse(
                        f"The data directory {self.directory} is in use by another process "
                        f"(pid {owner}); only one process may own it. Stop that process, or "
                        "set INVENTORY_DATA_DIR to another directory.") from None
                if not warned:
                    log.warning("Waiting up to %.0f s for process %s to release the data "
                                "directory %s.", wait, owner, self.directory)
                    warned = True
                time.sleep(0.1)
        os.ftruncate(self._lock_fd, 0)
        os.pwrite(self._lock_fd, f"{os.getpid()}\n".encode(), 0)

    @classmethod
    def open(cls, directory, database, fsync="everysec", **options):
        """The journal of `directory`, replayed into `database` (a mongomock
        database), whose collections it then tracks; the directory's lock is
        released again when that fails."""
        journal = cls(directory, fsync, **options)
        try:
            return journal._load(database)
        except BaseException:
            os.close(journal._lock_fd)
            raise

    def _load(self, database):
        collecting = gc.isenabled()
        gc.disable()  # a replay makes millions of objects and no cycles
        try:
            self._replay_directory(database)
        finally:
            if collecting:
                gc.enable()
        # Documents make no cycles: keep the cyclic collector from walking
        # every replayed one in each full collection (they are still freed
        # when deleted).
        gc.freeze()
        for name in database.list_collection_names():
            self.track(name, database[name])
        return self._start_appending()

    def _replay_directory(self, database):
        snapshots, segments, stale, extensions = {}, {}, [], {}
        for name in os.listdir(self.directory):
            match = _FILE.match(name)
            if match:
                (snapshots if match[1] == "snapshot" else segments)[int(match[2])] = name
                if match[1] == "snapshot":
                    extensions[int(match[2])] = match[3]
            elif name.endswith(".tmp"):
                stale.append(name)  # a compaction that did not finish
        self._snapshot = max(snapshots, default=0)
        self._refuse_on_evidence_of_loss(snapshots, segments)
        live = sorted(number for number in segments if number >= self._snapshot)
        first = self._snapshot or 1
        expected = list(range(first, first + len(live)))
        if live != expected:
            missing = sorted(set(range(first, max(live) + 1)) - set(live))
            since = f"snapshot-{self._snapshot:06d}" if self._snapshot else "nothing"
            raise JournalCorrupt(
                f"{self._path('journal', missing[0])} is missing (the files in "
                f"{self.directory} go from {since} to journal-{max(live):06d}); nothing "
                "was changed.")
        torn = None
        if self._snapshot:
            self._snapshot_path = self._path("snapshot", self._snapshot,
                                             extensions[self._snapshot])
            if extensions[self._snapshot] == "bson":
                self._replay_snapshot(database, self._snapshot_path)
            else:
                self._replay(database, self._snapshot_path, last=False)
            self._snapshot_size = os.path.getsize(self._snapshot_path)
        for number in live:
            torn = self._replay(database, self._path("journal", number), last=number == live[-1])
        # the replay succeeded: now the directory may change
        current = live[-1] if live else first
        if torn is not None:
            os.truncate(self._path("journal", current), torn)
        for name in stale:
            os.remove(os.path.join(self.directory, name))
        for number, name in {**snapshots, **segments}.items():
            if number < self._snapshot:
                os.remove(os.path.join(self.directory, name))
        self._sizes = {number: os.path.getsize(self._path("journal", number)) for number in live}
        self._current = current
        ended = [self._path("journal", number) for number in live if number != current]
        for path in ([self._snapshot_path] if self._snapshot_path else []) + ended:
            stat = os.stat(path)
            self._files[path] = (*_identity(stat), stat.st_size)

    def _refuse_on_evidence_of_loss(self, snapshots, segments):
        """A data directory that lost files, or data in them, must not start
        as if nothing had happened: the manifest says what the last process
        left (a directory of an earlier version: `current-segment`, the
        segment it appended to)."""
        manifest = self._read_manifest()
        if manifest is None:
            return self._refuse_without_the_current_segment(segments)
        recorded = manifest["snapshot"]
        if recorded and recorded > self._snapshot:  # a newer one replaces it: not lost
            raise self._lost(f"{self._path('snapshot', recorded)} is missing")
        if recorded and recorded == self._snapshot:
            path = os.path.join(self.directory, snapshots[recorded])
            if os.path.getsize(path) < manifest["snapshot_bytes"]:
                raise self._lost(f"{path} is {os.path.getsize(path)} bytes, shorter than the "
                                 f"{manifest['snapshot_bytes']} it was written with")
        for number, size in sorted((int(n), size) for n, size in manifest["segments"].items()):
            if number < self._snapshot:
                continue  # the snapshot holds it
            path = self._path("journal", number)
            if number not in segments:
                raise self._lost(f"{path} is missing")
            if os.path.getsize(path) < size:
                raise self._lost(f"{path} is {os.path.getsize(path)} bytes, shorter than the "
                                 f"{size} the last process wrote and synced")
        if manifest["current"] >= self._snapshot and manifest["current"] not in segments:
            raise self._lost(f"{self._path('journal', manifest['current'])} is missing")

    def _lost(self, what):
        return JournalCorrupt(
            f"{what}, but {os.path.join(self.directory, MANIFEST)} records it: data this "
            "directory held is gone, and the store refuses to start without it. Nothing was "
            "changed. Restore the data directory from a backup; or, to start from the files "
            f"that are left and lose what is missing, move {MANIFEST} out of the directory "
            "(docs/reliability.md: Recovering a data directory).")

    def _read_manifest(self):
        path = os.path.join(self.directory, MANIFEST)
        try:
            with open(path, "rb") as manifest:
                return orjson.loads(manifest.read())
        except FileNotFoundError:
            return None
        except orjson.JSONDecodeError as error:
            raise JournalCorrupt(f"{path} cannot be read ({error}); nothing was changed. "
                                 f"Move {MANIFEST} out of the directory to start without its "
                                 "checks.") from error

    def _refuse_without_the_current_segment(self, segments):
        """A data directory whose journal was deleted must not start empty:
        CURRENT names the segment the last process appended to."""
        try:
            with open(os.path.join(self.directory, CURRENT), "rb") as named:
                current = int(named.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            return  # a new directory, or one from before CURRENT existed
        if current and current not in segments:
            raise JournalCorrupt(
                f"{self._path('journal', current)} is missing, but {CURRENT} says the last "
                f"process appended to it: the data since the last snapshot would be lost. "
                "Restore the file, or move the directory away to start empty; nothing was "
                "changed.")

    def _manifest(self):
        """What the next start must find (the file mutex held): the snapshot,
        the ended segments' sizes and the current one's size known synced."""
        segments = {str(number): size for number, size in self._sizes.items()
                    if number != self._segment}
        segment, synced = self._durable
        segments[str(self._segment)] = synced if segment == self._segment else 0
        return {"snapshot": self._snapshot, "snapshot_bytes": self._snapshot_size,
                "segments": segments, "current": self._segment}

    def _record_off_the_loop(self):
        """_record (two fsyncs) in the hub's thread pool under gevent: the
        store's lock waits for it, the event loop does not. (Not while the
        process exits: the pool may be gone.)"""
        if self._closing:
            self._record()
        else:
            _blocking(self._record)

    def _record(self):
        """Rewrite the manifest from the journal's state as it is now."""
        with self._manifest_mutex:
            with self._file_mutex:
                manifest, durable = self._manifest(), self._durable
            _write_atomically(os.path.join(self.directory, MANIFEST), orjson.dumps(manifest))
            _sync_directory(self.directory)
            self._recorded = durable

    def _start_appending(self):
        self._open_segment(self._current)
        try:
            os.remove(os.path.join(self.directory, CURRENT))  # an earlier version's: the manifest says it
        except FileNotFoundError:
            pass
        _original("_thread", "start_new_thread")(self._write_queued, ())
        self._next_compaction = self._compaction_threshold()
        if self.fsync == "everysec":
            _original("_thread", "start_new_thread")(self._sync_every_second, ())
        atexit.register(self.close)
        self._maybe_compact()
        return self

    def _replay(self, database, path, last):
        """Apply one file's lines; the length of its complete lines when its
        last line is torn (allowed only at the end of the last segment)."""
        good, collections_ = 0, {}
        with open(path, "rb") as lines:
            for number, line in enumerate(lines, 1):
                if not line.endswith(b"\n"):
                    if not last:
                        raise JournalCorrupt(f"{path} line {number} is cut short, and it is not "
                                             "the end of the journal; nothing was changed.")
                    log.warning("Dropping a torn last line of the journal (a crash while it "
                                "was written; its write never returned): %s line %d, %d bytes.",
                                path, number, len(line))
                    return good
                try:
                    self._apply(database, collections_, decode(line))
                except Exception as error:
                    raise JournalCorrupt(
                        f"{path} line {number} is not a journal record ({error}); the store "
                        "cannot start from it, and nothing was changed. Restore the directory "
                        "from a backup, or cut the file before that line to start with what "
                        "precedes it.") from error
                good += len(line)
        return None

    def _replay_snapshot(self, database, path):
        """Apply a BSON snapshot's documents."""
        collections_, read = {}, 0
        name, stored, put_in = None, None, _DictStore.__setitem__
        with open(path, "rb") as documents:
            try:
                for document in bson.decode_file_iter(documents, _BSON_OPTIONS):
                    put = document.get("put")
                    # a snapshot is each collection's records in a row: the
                    # plain case (a string `_id` is its own key) set directly
                    if put is not None and stored is not None and document["c"] == name \
                            and put["_id"].__class__ is str:
                        put_in(stored, put["_id"], put)
                    else:
                        self._apply(database, collections_, decode_snapshot_record(document))
                        name = document.get("c")
                        stored = collections_[name][1] if name in collections_ else None
                    read += 1
            except Exception as error:
                raise JournalCorrupt(
                    f"{path} record {read + 1} is not a snapshot record ({error}); the "
                    "store cannot start from it, and nothing was changed. Restore the "
                    "directory from a backup.") from error

    @staticmethod
    def _apply(database, collections_, records):
        """Apply one line's records; `collections_` caches {name: (collection,
        its documents)} across a file."""
        if not isinstance(records, list):
            raise TypeError("a line must be a list of records")
        for record in records:
            name = record["c"]
            try:
                collection, documents = collections_[name]
            except KeyError:  # mongomock makes a new collection object on each lookup
                collection = database[name]
                store = mongomock_internals.collection_store(collection)
                documents = mongomock_internals.documents(store)
                if not isinstance(documents, _Tracked):
                    documents = mongomock_internals.replace_documents(store, _Tracked(documents))
                collections_[name] = collection, documents
            if "put" in record:
                document = record["put"]
                _DictStore.__setitem__(documents, _key(document["_id"]), document)
            elif "del" in record:
                _DictStore.pop(documents, _key(record["del"]), None)
            elif "indexes" in record:
                collection.drop_indexes()
                for index, spec in record["indexes"].items():
                    options = {k: v for k, v in spec.items() if k != "key"}
                    collection.create_index([tuple(key) for key in spec["key"]], name=index,
                                            **options)
            elif record.get("drop") is True:
                collection.drop()
                del collections_[name]  # a new dict of documents
            else:
                raise ValueError(f"unknown record {sorted(record)}")

    def track(self, name, collection):
        """Note the writes to `collection` (a mongomock collection) from now on."""
        if name not in self._stores:
            store = mongomock_internals.collection_store(collection)
            documents = mongomock_internals.documents(store)
            if not isinstance(documents, _Tracked):
                mongomock_internals.replace_documents(store, _Tracked(documents))
            self._stores[name] = store
            self._indexes[name] = _copied(store.indexes)

    def committing(self, lock, name):
        """A context manager holding `lock` that commits collection `name` when left."""
        return _Committing(lock, self, name)

    # -- appending -----------------------------------------------------------

    def commit(self, only=None):
        """Append what the writes since the last commit changed, in
        collection `only` or in all (the store's lock held). Raises
        Unavailable when it cannot: the changes stay in memory and go with
        the next append that succeeds."""
        if self._child is not None:
            self._reap()
        records, written = [], []
        for name, store in ([(only, self._stores[only])] if only else self._stores.items()):
            documents = mongomock_internals.documents(store)
            if documents.__class__ is not _Tracked:  # dropped: a new dict
                records.append({"c": name, "drop": True})
                documents = mongomock_internals.replace_documents(store, _Tracked(documents))
                documents.dirty = dict.fromkeys(documents)
                self._indexes[name] = {}
            if store.indexes != self._indexes[name]:
                self._indexes[name] = _copied(store.indexes)
                records.append({"c": name, "indexes": self._indexes[name]})
            if documents.dirty:
                written.append(documents)
                for key in documents.dirty:
                    document = documents.get(key)
                    if document is None:
                        records.append({"c": name, "del": key})
                    else:
                        untrack(document)  # walked by no full collection (untracked.py)
                        records.append({"c": name, "put": document})
        if not records:
            return None
        queued = self._queue_line(encode(records))
        for documents in written:
            documents.dirty = {}
        self._maybe_compact()
        return queued

    # -- the writer thread ---------------------------------------------------
    # Commits queue their lines in order under the store's lock; one OS thread
    # appends them, so that write(2) never runs in the event loop: a stalled
    # or full disk stalls or refuses the writers, never reads or /healthz.

    def _queue_line(self, line):
        done = _original("_thread", "allocate_lock")()
        done.acquire()
        queued = [line, done, None]  # the line, released when written, the error
        with self._queue_mutex:
            self._queue.append(queued)
        try:
            self._work.release()  # wake the writer
        except RuntimeError:
            pass  # awake already
        return queued

    def written(self, queued):
        """Return once the queued line is in the journal, after every earlier
        one; Unavailable if it could not be written (it stays queued, in
        order, ahead of the next line)."""
        line, done, _ = queued
        # The writer thread appends a line in tens of microseconds: the loop
        # waits that long itself (the GIL let go), rather than handing the
        # wait to a pool thread, three thread switches a write (issue 43); a
        # disk that stalls holds it BRIEF_WAIT at most, then a pool thread waits.
        if not done.acquire(True, BRIEF_WAIT):
            _blocking(done.acquire)  # under gevent a pool thread waits, not the loop
        if queued[2] is not None:
            log.error("%s", queued[2])
            raise Unavailable(queued[2])

    def _drain(self):
        """Wait until every queued line is written (a segment change, a close)."""
        queued = self._queue_line(None)
        queued[1].acquire()

    def _write_queued(self):
        """The writer thread: append queued lines in order, for ever."""
        while True:
            self._work.acquire()
            while True:
                with self._queue_mutex:
                    if not self._queue:
                        break
                    queued = self._queue.popleft()
                if queued[0] is not None:
                    try:
                        self._append_in_order(queued[0])
                    except Unavailable as error:
                        queued[2] = str(error)
                queued[1].release()

    def _append_in_order(self, line):
        lines, self._unwritten = [*self._unwritten, line], []
        for index, each in enumerate(lines):
            try:
                self._append(each)
            except Unavailable as error:
                self._unwritten = lines[index:]  # written first by the next that can be
                self._unwritten_because = error.detail
                raise

    def _append(self, line):
        if self._failure is not None:
            raise Unavailable(self.refusal)
        if self._closed:
            raise Unavailable("The embedded store's journal is closed.")
        with self._file_mutex:  # the size of the file is the size written, for the guard too
            fault = self._fault_in_current()
            if fault is not None:
                self._fail(fault)
                raise Unavailable(self.refusal)
            current = self._segment
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(self._fd, view):]
            except OSError as error:
                try:  # take back a partial line, so the next append does not follow it
                    os.ftruncate(self._fd, self._sizes[current])
                except OSError as truncating:
                    self._fail(f"a partial line could not be taken back ({truncating})")
                raise Unavailable(f"The embedded store's journal in {self.directory} could "
                                  f"not be written ({error.strerror}); try again shortly."
                                  ) from error
            self._sizes[current] += len(line)
        self._written = True
        if self.fsync == "always":
            self._sync(self._fd, offload=False)  # in the writer thread already
            self._durable = (current, self._sizes[current])

    @property
    def refusal(self):
        """Why writes are refused, or None when they are not."""
        if self._failure is None:
            if self._unwritten and self._unwritten_because:  # (a full disk)
                return (f"{self._unwritten_because} {len(self._unwritten)} refused writes wait "
                        "for the journal; they are tried again each second.")
            return None
        if not self._recoverable:
            return (f"The embedded store's journal in {self.directory} failed "
                    f"({self._failure}); writes are refused until the service restarts.")
        return (f"The embedded store's journal in {self.directory} failed ({self._failure}); "
                "writes are refused until this process has written a full snapshot of what "
                "it holds, which it is doing; try again shortly.")

    def _fail(self, reason):
        """Refuse appends from now on: what is on disk is not what was acknowledged."""
        if self._failure is None:
            self._failure = reason
            log.error("The embedded store's journal in %s failed: %s. Writes are refused until "
                      "this process has written a full snapshot of what it holds in memory "
                      "(every acknowledged write); it starts writing one now.",
                      self.directory, reason)

    def _fault_in_current(self):
        """Why the segment appended to is no longer what this process wrote
        (deleted, replaced, truncated or written to by another), or None; the
        file mutex held. The next start would replay the file at the path."""
        path = self._path("journal", self._segment)
        try:
            at_path, open_ = os.stat(path), os.fstat(self._fd)
        except FileNotFoundError:
            return f"{path} was deleted"
        if _identity(at_path) != _identity(open_):
            return f"{path} was replaced by another file"
        return _size_fault(path, open_.st_size, self._sizes[self._segment])

    def _fault_in_files(self):
        """Why the files the next start reads are not those this process
        left, or None; the file mutex held."""
        lock = os.path.join(self.directory, "lock")
        try:
            if _identity(os.stat(lock)) != _identity(os.fstat(self._lock_fd)):
                return f"{lock} was replaced by another file"
        except FileNotFoundError:
            return f"{lock} was deleted (another process could take the directory)"
        for path, (inode, device, size) in self._files.items():
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                return f"{path} was deleted"
            if _identity(stat) != (inode, device):
                return f"{path} was replaced by another file"
            fault = _size_fault(path, stat.st_size, size)
            if fault is not None:
                return fault
        return self._fault_in_current()

    def inspect(self):
        """Check that the files are those this process wrote (the guard's
        round, a few stat calls); a fault found refuses writes until a
        snapshot is written. The reason, or None."""
        if self._closed or self._fd is None:
            return None
        with self._file_mutex:
            fault = self._fault_in_files()
        if fault is not None:
            self._fail(fault)
        return fault

    def _sync(self, fd, offload=True):
        try:
            _blocking(os.fsync, fd) if offload else os.fsync(fd)
        except OSError as error:  # the kernel may have dropped the pages: stop here
            self._fail(f"fsync failed: {error}")
            raise Unavailable(f"The embedded store's journal in {self.directory} could not "
                              f"be synced ({error.strerror}).") from error

    def _sync_every_second(self):
        """An OS thread (under gevent too): fsync what was appended, once a second."""
        sleep = _original("time", "sleep")
        while True:
            sleep(1)
            with self._sync_lock:
                if self._closed:
                    return
                self._sync_pending()

    def _sync_pending(self):
        if self._written:
            self._written = False
            with self._file_mutex:
                fd, segment = self._fd, self._segment
                size = self._sizes.get(segment, 0)  # written before the fsync starts
            try:
                os.fsync(fd)
            except OSError as error:
                self._fail(f"fsync failed: {error}")  # the next append raises
            else:
                self._durable = (segment, size)
        while self._retired:
            os.close(self._retired.pop())

    def _open_segment(self, number, new_chain=False):
        """Append to segment `number` from now on. `new_chain`: after a fault,
        it follows snapshot `number`, which is being written, and no earlier file."""
        fd = os.open(self._path("journal", number), os.O_WRONLY | os.O_APPEND | os.O_CREAT,
                     0o644)
        size = os.fstat(fd).st_size
        if size:
            os.fsync(fd)  # the manifest records only what is on disk
        with self._file_mutex:
            if new_chain:
                self._snapshot, self._snapshot_size, self._snapshot_path = number, 0, None
                self._sizes, self._files = {}, {}
            self._fd, self._segment, self._durable = fd, number, (number, size)
            self._sizes.setdefault(number, 0)
        self._record_off_the_loop()

    def close(self):
        """Sync and close (a clean stop); the directory is free for another process."""
        if self._closed or self._lock_fd is None:
            return
        self._closing = True
        if self._failure is not None and self._fd is not None:
            # what memory holds is all there is of the data: finish its snapshot
            self.recover(now=True)
            if self._recovering:
                self.wait_for_compaction(CLOSE_WAIT)
            if self._failure is not None:
                log.error("The embedded store's journal in %s was not made durable again before "
                          "the stop (%s): what this process held is lost, and the next start "
                          "refuses the directory (docs/reliability.md: Recovering a data "
                          "directory).", self.directory, self._failure)
        if self._child is not None:  # abandoned: the next compaction starts afresh
            self._abandon_child()
        if self._fd is not None and not self._closed:
            self._drain()  # the queued writes end first
        with self._sync_lock:
            self._closed = True
            if self._fd is not None:
                try:
                    self._retired.append(self._fd)
                    self._written = True
                    self._sync_pending()
                    if self._failure is None:
                        self._record()  # the size the last segment ended at
                except OSError:
                    pass
            os.close(self._lock_fd)  # releases the flock
        atexit.unregister(self.close)

    # -- compaction ----------------------------------------------------------

    def _compaction_threshold(self):
        """Bytes of segments that start a compaction: a start then replays at
        most 1.25 snapshots' worth (start-up time is what this bounds)."""
        return max(self.compact_at, self._snapshot_size // 4)

    def _maybe_compact(self):
        if self._child is None and self._failure is None \
                and sum(self._sizes.values()) >= self._next_compaction:
            try:
                self.compact()
            except OSError as error:  # no fork (memory), no new segment (disk): later
                log.error("Journal compaction could not start: %s", error)
                self._next_compaction = sum(self._sizes.values()) + self.compact_at

    def compact(self):
        """Start a snapshot of the current data in a child process (the
        store's lock held, or nothing else running); its pid. The child
        merges the files (the snapshot and the ended segments), a process of
        its own (posix_spawn): a fork would copy the page tables of the
        whole store in the event loop, 90 ms at 3 GB. After a merge that
        failed (a file it could not read), the next one forks and writes
        what memory holds, as a fault's snapshot does."""
        if self._child is not None:
            return self._child[0]
        if self._failure is not None:
            raise Unavailable(self.refusal)
        self._drain()  # every line so far in the ending segment, none in flight
        number = self._segment + 1
        ended = self._fd
        started = time.perf_counter()
        self._sync(ended)  # every segment but the last is whole on disk
        synced = time.perf_counter()
        with self._file_mutex:  # from now on the guard checks it as an ended segment
            self._files[self._path("journal", self._segment)] = (
                *_identity(os.fstat(ended)), self._sizes[self._segment])
        # what the new snapshot merges: the snapshot and the segments before `number`
        merged = [self._snapshot_path or "",
                  *(self._path("journal", n) for n in sorted(self._sizes) if n < number)]
        self._open_segment(number)
        self._retire(ended)
        pid = None
        if not self._from_memory:
            try:
                pid = _spawn_merge(self._path("snapshot", number), merged)
            except OSError as error:  # no interpreter to run: from memory
                log.error("Journal compaction could not start its merge (%s); it forks.", error)
        if pid is None:
            pid = _original("os", "fork")()
            if pid == 0:
                self._write_snapshot(number)  # never returns
        self._child = (pid, number)
        # what the writes waited for (Redis reports its latest_fork_usec alike)
        self.last_pause = {"fsync_ms": (synced - started) * 1000,
                           "total_ms": (time.perf_counter() - started) * 1000}
        log.info("Journal compaction into snapshot %d started (pid %d); the store waited "
                 "%.0f ms, %.0f of them for the fsync of the ended segment.", number, pid,
                 self.last_pause["total_ms"], self.last_pause["fsync_ms"])
        return pid

    def _write_snapshot(self, number):
        """In the child: the snapshot, fsynced and renamed into place; exit 0 on success."""
        _exit_with(lambda: self._snapshot_written(number))

    def _snapshot_written(self, number):
        """Whether the child wrote the snapshot (False: its parent died first)."""
        os.close(self._lock_fd)  # the lock stays the parent's: it goes when the parent dies
        gc.disable()  # nothing here makes cycles; collecting would copy every page
        parent, path = os.getppid(), self._path("snapshot", number)
        with open(path + ".tmp", "wb", buffering=1 << 20) as out:
            for name, store in self._stores.items():
                out.write(encode_snapshot_record({"c": name, "indexes": self._indexes[name]}))
                for count, document in enumerate(mongomock_internals.documents(store).values()):
                    out.write(encode_snapshot_record({"c": name, "put": document}))
                    if count % 10000 == 0 and os.getppid() != parent:
                        return False  # the parent died: a new owner may be starting
            out.flush()
            os.fsync(out.fileno())
        os.replace(path + ".tmp", path)
        _sync_directory(self.directory)
        return True

    def _reap(self):
        """Finish a compaction (or a fault's snapshot) whose child has exited."""
        pid, number = self._child
        try:
            done, status = _original("os", "waitpid")(pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (gevent's SIGCHLD watcher)
            done, status = pid, None
        if not done:
            return
        self._child = None
        path = self._path("snapshot", number)
        try:
            stat = os.stat(path) if status in (0, None) else None
        except FileNotFoundError:
            stat = None
        if stat is None:
            _remove(path + ".tmp")
            if self._recovering:
                self._recovering = False
                self._retry_later(f"the snapshot's child failed (exit status {status})")
                return
            log.error("Journal compaction into %s failed (exit status %s); the journal is "
                      "kept as it is and compaction is tried again later, from memory.",
                      path, status)
            self._from_memory = True
            self._next_compaction = sum(self._sizes.values()) + self._compaction_threshold()
            return
        with self._file_mutex:  # the guard sees the old files or the new, never half
            for old in [n for n in self._sizes if n < number]:
                del self._sizes[old]
            self._snapshot, self._snapshot_size = number, stat.st_size
            self._snapshot_path = path
            self._files = {path: (*_identity(stat), stat.st_size)}
            # what the snapshot holds: removed once the manifest names the snapshot
            stale = [os.path.join(self.directory, name) for name in os.listdir(self.directory)
                     if (match := _FILE.match(name)) and int(match[2]) < number]
        try:
            self._record_off_the_loop()
        except OSError as error:  # the directory is failing: a fault, however it started
            if self._recovering:
                self._recovering = False
                self._retry_later(f"the manifest could not be written ({error})")
            else:
                self._fail(f"the manifest could not be written ({error})")
            return
        # Unlinking a snapshot of hundreds of megabytes takes the file system
        # tens of milliseconds: in the thread pool, as the manifest's fsyncs.
        if self._closing:
            _remove_all(stale)
        else:
            _blocking(_remove_all, stale)
        self._next_compaction = self._compaction_threshold()
        self._from_memory = False
        if self._recovering:
            self._recovering, self._failure = False, None
            self._backoff = RETRY_BACKOFF[0]
            log.error("The embedded store's journal in %s is durable again: %s (%d bytes) "
                      "holds every write this process acknowledged, and the files from before "
                      "the fault are deleted. Writes are accepted again.", self.directory,
                      path, self._snapshot_size)
        else:
            log.info("Journal compacted into %s (%d bytes).", path, self._snapshot_size)

    # -- the guard: noticing a fault, and writing a snapshot after it -----------
    # A journal deleted, replaced or truncated under the process, or a data
    # directory emptied, would otherwise be noticed by the next start only
    # (or never). The process holds every acknowledged write in memory, so it
    # refuses writes, writes a full snapshot from a forked child as a
    # compaction does, and accepts writes again once that is on disk.

    def guard(self, lock, every=GUARD_EVERY):
        """Check the files every `every` seconds, and after a fault write a
        snapshot under `lock` (the store's), from a thread (under gevent a
        greenlet, which waits for the checks in the hub's thread pool)."""
        import threading  # (gevent's, when patched: the lock below is gevent's too)

        def run():
            while not self._closed:
                time.sleep(every)
                try:
                    self.check(lock)
                except Exception:  # noqa: BLE001 - the guard goes on
                    log.exception("The journal's guard failed a round; it goes on.")
        threading.Thread(target=run, name="journal-guard", daemon=True).start()

    def check(self, lock):
        """One round of the guard: inspect the files; after a fault, start or
        finish the snapshot that ends it; else keep the manifest's record of
        the synced size up to date."""
        if self._closed:
            return
        _blocking(self.inspect)
        if self._failure is not None or self._child is not None:
            with lock:
                if self._child is not None:
                    self._reap()
                if self._failure is not None:
                    self.recover()
        elif self._unwritten:  # (a full disk) tried again without waiting for a write
            done = self._queue_line(b"")[1]
            if not done.acquire(False):
                _blocking(done.acquire)
        elif self._durable != self._recorded \
                or not os.path.exists(os.path.join(self.directory, MANIFEST)):
            _blocking(self._record)

    def recover(self, now=False):
        """After a fault (the store's lock held): start writing a full
        snapshot of memory in a child, as the first file of a new chain;
        writes are accepted again when it is on disk (`_reap`). `now`: do not
        wait for the retry's backoff."""
        if self._failure is None or not self._recoverable or self._closed:
            return
        if self._child is not None:
            if self._recovering:
                return  # under way
            self._abandon_child()  # a compaction of files that failed
        if not now and time.monotonic() < self._retry_at:
            return
        started = time.perf_counter()
        self._drain()  # every line queued is written or refused: memory holds them all
        ended = self._fd
        try:
            os.makedirs(self.directory, exist_ok=True)
            self._own_the_lock_file()
            numbers = [int(match[2]) for match in map(_FILE.match, os.listdir(self.directory))
                       if match]
            number = max([self._segment, *numbers]) + 1  # after every file there
            try:
                self._open_segment(number, new_chain=True)
            finally:
                if self._fd is not ended:
                    self._retire(ended)
            self._unwritten = []  # refused, yet in memory: the snapshot holds them
            pid = _original("os", "fork")()
            if pid == 0:
                self._write_snapshot(number)  # never returns
        except DataDirectoryInUse as error:
            self._recoverable = False
            self._failure = str(error)
            log.error("%s", error)
            return
        except OSError as error:
            self._retry_later(str(error))
            return
        self._child, self._recovering = (pid, number), True
        self.last_pause = {"fsync_ms": 0.0, "total_ms": (time.perf_counter() - started) * 1000}
        log.error("The embedded store's journal in %s: writing a full snapshot of what this "
                  "process holds into %s (pid %d); the store waited %.0f ms.", self.directory,
                  self._path("snapshot", number), pid, self.last_pause["total_ms"])

    def _retire(self, fd):
        """Close an ended segment's descriptor (under `everysec`, the syncing thread does)."""
        if self.fsync == "everysec":
            self._retired.append(fd)
        else:
            os.close(fd)

    def _retry_later(self, why):
        self._retry_at = time.monotonic() + self._backoff
        log.error("The embedded store's journal in %s could not write its snapshot after a "
                  "fault (%s); writes stay refused, and it tries again in %.0f s.",
                  self.directory, why, self._backoff)
        self._backoff = min(self._backoff * 2, RETRY_BACKOFF[1])

    def _abandon_child(self):
        try:
            os.kill(self._child[0], signal.SIGKILL)
            _original("os", "waitpid")(self._child[0], 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        _remove(self._path("snapshot", self._child[1]) + ".tmp")
        self._child, self._recovering = None, False

    def _own_the_lock_file(self):
        """The lock file at its path is this process's again (made anew when
        removed), or DataDirectoryInUse: another process took the directory."""
        path = os.path.join(self.directory, "lock")
        try:
            if _identity(os.stat(path)) == _identity(os.fstat(self._lock_fd)):
                return
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise DataDirectoryInUse(
                f"Another process (pid {owner}) took the data directory {self.directory} "
                "after this process's lock file was removed; this process refuses writes "
                "until it restarts.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        os.close(self._lock_fd)
        self._lock_fd = fd

    def wait_for_compaction(self, timeout=60.0):
        """Wait until a running compaction ends (for tests and the bench)."""
        deadline = time.monotonic() + timeout
        while self._child is not None and time.monotonic() < deadline:
            self._reap()
            if self._child is not None:
                time.sleep(0.01)
        return self._child is None


# -- compaction by merging the files, in a process of its own --------------

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_RAW_OPTIONS = CodecOptions(document_class=bson.raw_bson.RawBSONDocument, tz_aware=False)


def _spawn_merge(path, merged):
    """Start `merge` of `merged` (a snapshot's path or "", then segments)
    into snapshot `path` in a new process; its pid. posix_spawn (vfork)
    copies nothing of this process."""
    return _original("os", "posix_spawn")(sys.executable, [
        sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
        "from inventory.embedded.journal import merge_main; merge_main(sys.argv[1:])",
        _ROOT, str(os.getpid()), path, *merged], os.environ)  # the environment as it is


def merge_main(arguments):
    """The merging process: `parent pid, snapshot path, old snapshot path or
    "", segments...`; exit 0 once the snapshot is in place."""
    parent, path, snapshot, *segments = arguments

    def merged():
        gc.disable()  # millions of records, no cycles
        return merge(snapshot or None, segments, path, int(parent))
    _exit_with(merged)


def _exit_with(work):
    """A compaction's process ends here, whichever it is (a fork, a merge):
    exit 0 if `work()` is true, else 1, with what failed on stderr."""
    status = 1
    try:
        if work():
            status = 0
    except BaseException as error:  # noqa: BLE001 - reported through the status
        try:
            os.write(2, f"journal compaction failed: {error!r}\n".encode())
        except OSError:
            pass
    finally:
        os._exit(status)


def merge(snapshot, segments, path, parent=None):
    """Write snapshot `path` (fsynced, renamed into place) from `snapshot`
    (a snapshot's path, BSON or JSON lines, or None) and the `segments`
    after it: what a start that replayed them would hold, in the order it
    would hold it. A document the old snapshot holds is copied from it as
    it is (kept as its offset there: the process needs a fraction of the
    store's memory), one a segment put as its snapshot record's BSON.
    False: the process `parent` died meanwhile (a new owner may be
    starting), nothing written."""
    # name: [its indexes, {document key: the offset of its record in the
    # old snapshot, or the BSON of its record}]
    collections_ = {}
    read = 0

    def apply(record, at=None):
        entry = collections_.setdefault(record["c"], [{}, {}])
        if "put" in record:
            entry[1][_merge_key(record["put"]["_id"])] = \
                at if at is not None else encode_snapshot_record(
                    {"c": record["c"], "put": record["put"]})
        elif "del" in record:
            entry[1].pop(_merge_key(record["del"]), None)
        elif "indexes" in record:
            entry[0] = dict(record["indexes"])
        elif record.get("drop") is True:
            entry[0], entry[1] = {}, {}
        else:
            raise ValueError(f"unknown record {sorted(record)}")

    def alive():
        return parent is None or read % 10000 or os.getppid() == parent

    with contextlib.ExitStack() as files:
        old = None
        if snapshot is not None and snapshot.endswith(".bson") and os.path.getsize(snapshot):
            with open(snapshot, "rb") as mapped:
                old = files.enter_context(mmap.mmap(mapped.fileno(), 0, access=mmap.ACCESS_READ))
            at = 0
            while at < len(old):
                size = int.from_bytes(old[at:at + 4], "little")
                document = bson.raw_bson.RawBSONDocument(old[at:at + size], _RAW_OPTIONS)
                if "line" in document:
                    for record in decode(document["line"]):
                        apply(record)
                else:
                    apply(document, at)
                at += size
                read += 1
                if not alive():
                    return False
        for file in ([snapshot] if snapshot is not None and not snapshot.endswith(".bson")
                     else []) + segments:
            with open(file, "rb") as lines:
                for line in lines:
                    for record in decode(line):
                        apply(record)
                    read += 1
                    if not alive():
                        return False
        with open(path + ".tmp", "wb", buffering=1 << 20) as out:
            for name, (indexes, documents) in collections_.items():
                out.write(encode_snapshot_record({"c": name, "indexes": indexes}))
                for count, record in enumerate(documents.values()):
                    if record.__class__ is int:
                        record = old[record:record + int.from_bytes(old[record:record + 4],
                                                                    "little")]
                    out.write(record)
                    if count % 10000 == 0 and parent is not None and os.getppid() != parent:
                        return False
            out.flush()
            os.fsync(out.fileno())
    os.replace(path + ".tmp", path)
    _sync_directory(os.path.dirname(path))
    return True


def _merge_key(document_id):
    """The key of a document by its `_id` (a raw one decoded): equal ids, one key."""
    if isinstance(document_id, bson.raw_bson.RawBSONDocument):
        document_id = bson.decode(document_id.raw, _BSON_OPTIONS)
    return _key(document_id)


def _size_fault(path, size, written):
    if size < written:
        return f"{path} was truncated in place ({size} bytes; this process wrote {written})"
    if size > written:
        return (f"{path} was written to by another process ({size} bytes; this process "
                f"wrote {written})")
    return None


def _remove_all(paths):
    for path in paths:
        _remove(path)


def _remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as error:  # (a directory in the way): left, and said
        log.warning("Could not remove %s: %s", path, error)


def _copied(indexes):
    return {name: {key: (list(value) if key == "key" else value) for key, value in spec.items()}
            for name, spec in indexes.items()}


def _write_atomically(path, data):
    with open(path + ".tmp", "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(path + ".tmp", path)


def _sync_directory(directory):
    """Make a file's creation or renaming in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
