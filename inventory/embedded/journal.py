"""Persistence for the embedded store: every accepted write appended to a
journal in INVENTORY_DATA_DIR before the call returns, replayed when a
process starts, compacted into a snapshot as it grows.

The design, and why: docs/design/journal.md"""
import atexit
import collections
import datetime
import fcntl
import gc
import importlib
import logging
import os
import re
import signal
import sys
import time

import bson
import orjson
from bson import json_util
from bson.codec_options import CodecOptions
from bson.errors import BSONError

from inventory.core.errors import Unavailable
from inventory.embedded import mongomock_internals

log = logging.getLogger(__name__)

FSYNC_POLICIES = ("always", "everysec", "no")
# Compact when the segments since the snapshot reach this, or a quarter of
# the snapshot if larger (Redis' auto-aof-rewrite-min-size and -percentage).
COMPACT_AT = 64 * 1024 * 1024
# How long a start waits for a previous owner of the directory to exit
# (gunicorn overlaps old and new workers on a reload) before refusing.
LOCK_WAIT = 10.0
_OPTIONS = json_util.RELAXED_JSON_OPTIONS
_ORJSON = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
CURRENT = "current-segment"  # the segment this process appends to, written when it opens one
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
    """A journal or snapshot line cannot be read; nothing was changed."""


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
        if b"null" not in line:  # orjson writes NaN and infinities as null
            return line + b"\n"
    except (orjson.JSONEncodeError, TypeError):
        pass
    return json_util.dumps(records, json_options=_OPTIONS).encode() + b"\n"


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
        self._written = False  # appended since the last fsync
        self._failure = None  # an error that makes further appends unsafe
        self._retired = []  # descriptors of ended segments, for the syncing thread to close
        self._closed = False
        self.last_pause = None  # {"fsync_ms", "total_ms"} the last compaction held the lock
        os.makedirs(self.directory, exist_ok=True)
        self._lock(lock_wait)
        self._sync_lock = _original("_thread", "allocate_lock")()
        self._queue = collections.deque()  # [line, done, error]: lines the writer thread appends
        self._queue_mutex = _original("_thread", "allocate_lock")()
        self._work = _original("_thread", "allocate_lock")()  # released: the queue has work
        self._unwritten = []  # lines that failed: written first by the next that can be
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
        self._refuse_without_the_current_segment(segments)
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

    def _start_appending(self):
        self._open_segment(self._current)
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
                    records.append({"c": name, "put": document} if document is not None
                                   else {"c": name, "del": key})
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
        if not done.acquire(False):
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
            except Unavailable:
                self._unwritten = lines[index:]  # written first by the next that can be
                raise

    def _append(self, line):
        if self._failure is not None:
            raise Unavailable(f"The embedded store's journal in {self.directory} failed "
                              f"({self._failure}); writes are refused until the service "
                              "restarts.")
        if self._closed:
            raise Unavailable("The embedded store's journal is closed.")
        self._check_file()
        current = self._segment
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as error:
            try:  # take back a partial line, so the next append does not follow it
                os.ftruncate(self._fd, self._sizes[current])
            except OSError as truncating:
                self._failure = truncating
            raise Unavailable(f"The embedded store's journal in {self.directory} could not "
                              f"be written ({error.strerror}); try again shortly.") from error
        self._sizes[current] += len(line)
        self._written = True
        if self.fsync == "always":
            self._sync(self._fd, offload=False)  # in the writer thread already

    def _check_file(self):
        """Refuse to acknowledge writes into a journal that is no longer the
        one at its path (deleted, or replaced under the process): the next
        start would replay the file at the path and lose them."""
        path = self._path("journal", self._segment)
        try:
            at_path, open_ = os.stat(path), os.fstat(self._fd)
            replaced = (at_path.st_ino, at_path.st_dev) != (open_.st_ino, open_.st_dev)
        except FileNotFoundError:
            replaced = True
        if replaced:
            self._failure = f"{path} was removed or replaced while in use"
            raise Unavailable(f"The embedded store's journal {path} was removed or replaced "
                              "under this process: writes are refused, so that none is "
                              "acknowledged and then lost. Restore the file or restart the "
                              "service.")

    def _sync(self, fd, offload=True):
        try:
            _blocking(os.fsync, fd) if offload else os.fsync(fd)
        except OSError as error:  # the kernel may have dropped the pages: stop here
            self._failure = error
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
            try:
                os.fsync(self._fd)
            except OSError as error:
                self._failure = error  # logged and raised by the next append
        while self._retired:
            os.close(self._retired.pop())

    def _open_segment(self, number):
        self._fd = os.open(self._path("journal", number),
                           os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._sizes.setdefault(number, 0)
        self._segment = number
        _write_atomically(os.path.join(self.directory, CURRENT), f"{number}\n".encode())
        _sync_directory(self.directory)

    def close(self):
        """Sync and close (a clean stop); the directory is free for another process."""
        if self._closed or self._lock_fd is None:
            return
        if self._child is not None:  # abandoned: the next compaction starts afresh
            try:
                os.kill(self._child[0], signal.SIGKILL)
                _original("os", "waitpid")(self._child[0], 0)
            except (ProcessLookupError, ChildProcessError):
                pass
            self._child = None
        if self._fd is not None and not self._closed:
            self._drain()  # the queued writes end first
        with self._sync_lock:
            self._closed = True
            if self._fd is not None:
                try:
                    self._retired.append(self._fd)
                    self._written = True
                    self._sync_pending()
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
        if self._child is None and sum(self._sizes.values()) >= self._next_compaction:
            try:
                self.compact()
            except OSError as error:  # no fork (memory), no new segment (disk): later
                log.error("Journal compaction could not start: %s", error)
                self._next_compaction = sum(self._sizes.values()) + self.compact_at

    def compact(self):
        """Start a snapshot of the current data in a child process (the
        store's lock held, or nothing else running); its pid."""
        if self._child is not None:
            return self._child[0]
        self._drain()  # every line so far in the ending segment, none in flight
        number = self._segment + 1
        ended = self._fd
        started = time.perf_counter()
        self._sync(ended)  # every segment but the last is whole on disk
        synced = time.perf_counter()
        self._open_segment(number)
        if self.fsync == "everysec":
            self._retired.append(ended)
        else:
            os.close(ended)
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
        status = 1
        try:
            os.close(self._lock_fd)  # the lock stays the parent's: it goes when the parent dies
            gc.disable()  # nothing here makes cycles; collecting would copy every page
            parent, path = os.getppid(), self._path("snapshot", number)
            with open(path + ".tmp", "wb", buffering=1 << 20) as out:
                for name, store in self._stores.items():
                    out.write(encode_snapshot_record({"c": name, "indexes": self._indexes[name]}))
                    for count, document in enumerate(mongomock_internals.documents(store).values()):
                        out.write(encode_snapshot_record({"c": name, "put": document}))
                        if count % 10000 == 0 and os.getppid() != parent:
                            return  # the parent died: a new owner may be starting
                out.flush()
                os.fsync(out.fileno())
            os.replace(path + ".tmp", path)
            _sync_directory(self.directory)
            status = 0
        except BaseException as error:  # noqa: BLE001 - reported through the status
            try:
                os.write(2, f"journal compaction failed: {error!r}\n".encode())
            except OSError:
                pass
        finally:
            os._exit(status)

    def _reap(self):
        """Finish a compaction whose child has exited."""
        pid, number = self._child
        try:
            done, status = _original("os", "waitpid")(pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (gevent's SIGCHLD watcher)
            done, status = pid, None
        if not done:
            return
        self._child = None
        path = self._path("snapshot", number)
        if status not in (0, None) or not os.path.exists(path):
            log.error("Journal compaction into %s failed (exit status %s); the journal is "
                      "kept as it is and compaction is tried again later.", path, status)
            try:
                os.remove(path + ".tmp")
            except FileNotFoundError:
                pass
            self._next_compaction = sum(self._sizes.values()) + self._compaction_threshold()
            return
        for old in [n for n in self._sizes if n < number]:
            os.remove(self._path("journal", old))
            del self._sizes[old]
        if self._snapshot_path:
            os.remove(self._snapshot_path)
        self._snapshot, self._snapshot_size = number, os.path.getsize(path)
        self._snapshot_path = path
        self._next_compaction = self._compaction_threshold()
        log.info("Journal compacted into %s (%d bytes).", path, self._snapshot_size)

    def wait_for_compaction(self, timeout=60.0):
        """Wait until a running compaction ends (for tests and the bench)."""
        deadline = time.monotonic() + timeout
        while self._child is not None and time.monotonic() < deadline:
            self._reap()
            if self._child is not None:
                time.sleep(0.01)
        return self._child is None


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
