"""What the next start must find: the chain of files it reads (the
snapshot, the segments since, the one appended to and how much of it is
known synced), as this process left them, recorded in `manifest.json`;
and a start's refusal when the directory shows that data it held is gone.

The checks, and why: docs/design/journal.md (A journal cannot be lost quietly)"""
import os

import orjson

from inventory.embedded.data_directory import (
    JournalCorrupt,
    identity,
    sync_directory,
    write_atomically,
)
from inventory.embedded.unpatched import blocking, original

# `current-segment`, which an earlier version wrote instead, is still read
# when there is no manifest.
MANIFEST = "manifest.json"
CURRENT = "current-segment"


class Chain:
    """The files a start reads, as this process left them; `mutex` is held
    while they change, by appends too (the size of the file is the size
    written, for the guard's checks as well)."""

    def __init__(self, directory):
        self.directory = directory  # a DataDirectory
        self.snapshot, self.snapshot_size, self.snapshot_path = 0, 0, None
        self.sizes = {}  # segment number: bytes, from the snapshot's on
        # {path: (inode, device, bytes)} of the snapshot and ended segments the
        # next start reads, as this process left them (the guard compares)
        self.files = {}
        self.segment = 0  # the segment appended to
        self.durable = (0, 0)  # (segment, bytes of it known fsynced)
        self.recorded = None  # the durable the manifest last recorded
        self.mutex = original("_thread", "allocate_lock")()  # appends vs. inspections
        self._manifest_mutex = original("_thread", "allocate_lock")()  # its writes, in order

    def note(self, path):
        """Record `path` as the file at it now is (the mutex held)."""
        stat = os.stat(path)
        self.files[path] = (*identity(stat), stat.st_size)

    def manifest(self):
        """What the next start must find (the mutex held): the snapshot,
        the ended segments' sizes and the current one's size known synced."""
        segments = {str(number): size for number, size in self.sizes.items()
                    if number != self.segment}
        segment, synced = self.durable
        segments[str(self.segment)] = synced if segment == self.segment else 0
        return {"snapshot": self.snapshot, "snapshot_bytes": self.snapshot_size,
                "segments": segments, "current": self.segment}

    def record(self):
        """Rewrite the manifest from the chain as it is now."""
        with self._manifest_mutex:
            with self.mutex:
                manifest, durable = self.manifest(), self.durable
            write_atomically(self.directory.join(MANIFEST), orjson.dumps(manifest))
            sync_directory(self.directory.path)
            self.recorded = durable

    def record_off_the_loop(self, closing=False):
        """`record` (two fsyncs) in the hub's thread pool under gevent: the
        store's lock waits for it, the event loop does not. (Not while the
        process exits, `closing`: the pool may be gone.)"""
        if closing:
            self.record()
        else:
            blocking(self.record)

    def recorded_is_behind(self):
        """Whether the manifest lags the size known synced, or is gone."""
        return self.durable != self.recorded \
            or not os.path.exists(self.directory.join(MANIFEST))


def refuse_on_evidence_of_loss(directory, snapshot, snapshots, segments):
    """A data directory that lost files, or data in them, must not start
    as if nothing had happened: the manifest says what the last process
    left (a directory of an earlier version: `current-segment`, the
    segment it appended to). `snapshot`: the newest snapshot's number there;
    `snapshots`, `segments`: {number: file name} of those there."""
    manifest = _read_manifest(directory)
    if manifest is None:
        return _refuse_without_the_current_segment(directory, segments)
    recorded = manifest["snapshot"]
    if recorded and recorded > snapshot:  # a newer one replaces it: not lost
        raise _lost(directory, f"{directory.file('snapshot', recorded)} is missing")
    if recorded and recorded == snapshot:
        path = directory.join(snapshots[recorded])
        if os.path.getsize(path) < manifest["snapshot_bytes"]:
            raise _lost(directory, f"{path} is {os.path.getsize(path)} bytes, shorter than "
                                   f"the {manifest['snapshot_bytes']} it was written with")
    for number, size in sorted((int(n), size) for n, size in manifest["segments"].items()):
        if number < snapshot:
            continue  # the snapshot holds it
        path = directory.file("journal", number)
        if number not in segments:
            raise _lost(directory, f"{path} is missing")
        if os.path.getsize(path) < size:
            raise _lost(directory, f"{path} is {os.path.getsize(path)} bytes, shorter than the "
                                   f"{size} the last process wrote and synced")
    if manifest["current"] >= snapshot and manifest["current"] not in segments:
        raise _lost(directory, f"{directory.file('journal', manifest['current'])} is missing")


def _lost(directory, what):
    return JournalCorrupt(
        f"{what}, but {directory.join(MANIFEST)} records it: data this "
        "directory held is gone, and the store refuses to start without it. Nothing was "
        "changed. Restore the data directory from a backup; or, to start from the files "
        f"that are left and lose what is missing, move {MANIFEST} out of the directory "
        "(docs/reliability.md: Recovering a data directory).")


def _read_manifest(directory):
    path = directory.join(MANIFEST)
    try:
        with open(path, "rb") as manifest:
            return orjson.loads(manifest.read())
    except FileNotFoundError:
        return None
    except orjson.JSONDecodeError as error:
        raise JournalCorrupt(f"{path} cannot be read ({error}); nothing was changed. "
                             f"Move {MANIFEST} out of the directory to start without its "
                             "checks.") from error


def _refuse_without_the_current_segment(directory, segments):
    """A data directory whose journal was deleted must not start empty:
    CURRENT names the segment the last process appended to."""
    try:
        with open(directory.join(CURRENT), "rb") as named:
            current = int(named.read().strip() or 0)
    except (FileNotFoundError, ValueError):
        return  # a new directory, or one from before CURRENT existed
    if current and current not in segments:
        raise JournalCorrupt(
            f"{directory.file('journal', current)} is missing, but {CURRENT} says the last "
            f"process appended to it: the data since the last snapshot would be lost. "
            "Restore the file, or move the directory away to start empty; nothing was "
            "changed.")


def forget_the_current_segment_file(directory):
    """Remove an earlier version's CURRENT: the manifest says it now."""
    try:
        os.remove(directory.join(CURRENT))
    except FileNotFoundError:
        pass
