"""The child processes that write a snapshot, while the worker goes on:
a merge of the files (the snapshot and the ended segments) in a process of
its own (posix_spawn copies nothing of the worker), or a fork that writes
what memory holds (after a merge failed, and after a fault). Either
fsyncs its snapshot and renames it into place, and exits 0 on success.

Why a merge rather than a fork: docs/design/journal.md"""
import contextlib
import gc
import mmap
import os
import sys

import bson
import bson.raw_bson
from bson.codec_options import CodecOptions

from inventory.embedded import mongomock_internals
from inventory.embedded.data_directory import sync_directory
from inventory.embedded.encoding import BSON_OPTIONS, decode, encode_snapshot_record
from inventory.embedded.unpatched import original

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_RAW_OPTIONS = CodecOptions(document_class=bson.raw_bson.RawBSONDocument, tz_aware=False)
_key = mongomock_internals.document_key


# -- from memory, in a forked child -----------------------------------------

def fork_snapshot(directory, tracker, number):
    """Fork a child that writes snapshot `number` of `directory` from the
    collections `tracker` holds (its copy-on-write view of memory); its pid."""
    pid = original("os", "fork")()
    if pid == 0:
        exit_with(lambda: _snapshot_written(directory, tracker, number))  # never returns
    return pid


def _snapshot_written(directory, tracker, number):
    """Whether the child wrote the snapshot (False: its parent died first)."""
    directory.unlock()  # the lock stays the parent's: it goes when the parent dies
    gc.disable()  # nothing here makes cycles; collecting would copy every page
    parent, path = os.getppid(), directory.file("snapshot", number)
    with open(path + ".tmp", "wb", buffering=1 << 20) as out:
        for name, store in tracker.stores.items():
            out.write(encode_snapshot_record({"c": name, "indexes": tracker.indexes[name]}))
            for count, document in enumerate(mongomock_internals.documents(store).values()):
                out.write(encode_snapshot_record({"c": name, "put": document}))
                if count % 10000 == 0 and os.getppid() != parent:
                    return False  # the parent died: a new owner may be starting
        out.flush()
        os.fsync(out.fileno())
    os.replace(path + ".tmp", path)
    sync_directory(directory.path)
    return True


# -- by merging the files, in a process of its own ----------------------------

def spawn_merge(path, merged):
    """Start `merge` of `merged` (a snapshot's path or "", then segments)
    into snapshot `path` in a new process; its pid. posix_spawn (vfork)
    copies nothing of this process."""
    return original("os", "posix_spawn")(sys.executable, [
        sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); "
        "from inventory.embedded.snapshot_writers import merge_main; merge_main(sys.argv[1:])",
        _ROOT, str(os.getpid()), path, *merged], os.environ)  # the environment as it is


def merge_main(arguments):
    """The merging process: `parent pid, snapshot path, old snapshot path or
    "", segments...`; exit 0 once the snapshot is in place."""
    parent, path, snapshot, *segments = arguments

    def merged():
        gc.disable()  # millions of records, no cycles
        return merge(snapshot or None, segments, path, int(parent))
    exit_with(merged)


def exit_with(work):
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
    sync_directory(os.path.dirname(path))
    return True


def _merge_key(document_id):
    """The key of a document by its `_id` (a raw one decoded): equal ids, one key."""
    if isinstance(document_id, bson.raw_bson.RawBSONDocument):
        document_id = bson.decode(document_id.raw, BSON_OPTIONS)
    return _key(document_id)
