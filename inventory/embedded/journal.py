"""Persistence for the embedded store: every accepted write appended to a
journal in INVENTORY_DATA_DIR before the call returns, replayed when a
process starts, compacted into a snapshot as it grows. `Journal` composes
the parts, each a module of its own: the data directory and its lock
(`data_directory`), what the writes changed (`tracking`), the lines'
encoding (`encoding`), the replay (`replay`), the manifest (`manifest`),
the append log (`appending`), compaction (`compaction`) and its child
processes (`snapshot_writers`), faults (`faults`) and the guard (`guard`).

The design, and why: docs/design/journal.md"""
import atexit
import gc
import logging

from inventory.embedded.appending import AppendLog, fsync_policy
from inventory.embedded.compaction import COMPACT_AT, Compaction
from inventory.embedded.data_directory import LOCK_WAIT, DataDirectory
from inventory.embedded.encoding import encode
from inventory.embedded.faults import Faults
from inventory.embedded.guard import GUARD_EVERY, Guard
from inventory.embedded.manifest import Chain, forget_the_current_segment_file
from inventory.embedded.replay import replay_directory
from inventory.embedded.tracking import Tracker

# the journal's parts log as one (inventory.embedded.journal), as operators filter it
log = logging.getLogger("inventory.embedded.journal")

# How long a stop waits for the snapshot a fault started (gunicorn's graceful timeout is 30 s).
CLOSE_WAIT = 20.0


class _Committing:
    """The store's lock; on leaving it, the journal writes what a write to
    one collection changed (a write changes its own collection only)."""

    def __init__(self, lock, journal, name):
        self._lock, self._name = lock, name
        self._commit, self._written = journal.commit, journal.appending.written

    def __enter__(self):
        self._lock.acquire()

    def __exit__(self, *exc):
        try:
            queued = self._commit(self._name)  # in order, under the lock
        finally:
            self._lock.release()
        if queued is not None:  # written outside it: a stalled disk stalls writers only
            self._written(queued)


class Journal:
    """The data directory of one embedded database, owned by this process:
    its parts, and what the store and the service ask of them."""

    def __init__(self, directory, fsync="everysec", compact_at=COMPACT_AT, lock_wait=LOCK_WAIT):
        self.fsync = fsync_policy(fsync)
        self.data_directory = DataDirectory(directory, lock_wait)
        self.directory = self.data_directory.path
        self.chain = Chain(self.data_directory)
        self.tracker = Tracker()
        self.faults = Faults(self.data_directory, self.chain)
        self.appending = AppendLog(self.data_directory, self.chain, self.faults, fsync)
        self.compaction = Compaction(self.data_directory, self.chain, self.appending,
                                     self.faults, self.tracker, compact_at)
        self._guard = Guard(self.data_directory, self.chain, self.appending, self.faults,
                            self.compaction, self.tracker)

    @classmethod
    def open(cls, directory, database, fsync="everysec", **options):
        """The journal of `directory`, replayed into `database` (a mongomock
        database), whose collections it then tracks; the directory's lock is
        released again when that fails."""
        journal = cls(directory, fsync, **options)
        try:
            return journal._load(database)
        except BaseException:
            journal.data_directory.unlock()
            raise

    def _load(self, database):
        collecting = gc.isenabled()
        gc.disable()  # a replay makes millions of objects and no cycles
        try:
            current = replay_directory(self.data_directory, database, self.chain)
        finally:
            if collecting:
                gc.enable()
        # Documents make no cycles: keep the cyclic collector from walking
        # every replayed one in each full collection (they are still freed
        # when deleted).
        gc.freeze()
        for name in database.list_collection_names():
            self.track(name, database[name])
        self.appending.start(current)
        forget_the_current_segment_file(self.data_directory)  # the manifest says it now
        self.compaction.next_at = self.compaction.threshold()
        atexit.register(self.close)
        self.compaction.maybe()
        return self

    def track(self, name, collection):
        """Note the writes to `collection` (a mongomock collection) from now on."""
        self.tracker.track(name, collection)

    def committing(self, lock, name):
        """A context manager holding `lock` that commits collection `name` when left."""
        return _Committing(lock, self, name)

    def commit(self, only=None):
        """Append what the writes since the last commit changed, in
        collection `only` or in all (the store's lock held); the queued
        line to wait for (`AppendLog.written`), or None. The changes stay in
        memory and go with the next append that succeeds when this one
        cannot."""
        compaction = self.compaction
        if compaction.child is not None:
            compaction.reap()
        records, written = self.tracker.changes(only)
        if not records:
            return None
        queued = self.appending.queue_line(encode(records))
        self.tracker.committed(written)
        compaction.maybe()
        return queued

    @property
    def refusal(self):
        """Why writes are refused, or None when they are not."""
        return self.faults.refusal or self.appending.backlog

    @property
    def last_pause(self):
        """{"fsync_ms", "total_ms"} the last compaction (or a fault's snapshot) held the lock."""
        return self.compaction.last_pause

    def compact(self):
        """Start a snapshot in a child process (`Compaction.start`); its pid."""
        return self.compaction.start()

    def wait_for_compaction(self, timeout=60.0):
        """Wait until a running compaction ends (for tests and the bench)."""
        return self.compaction.wait(timeout)

    def guard(self, lock, every=GUARD_EVERY):
        """Run the guard (`Guard.start`) with the store's `lock`."""
        self._guard.start(lock, every)

    def inspect(self):
        """The guard's check of the files (`Guard.inspect`): a fault's reason, or None."""
        return self._guard.inspect()

    def check(self, lock):
        """One round of the guard (`Guard.check`)."""
        self._guard.check(lock)

    def recover(self, now=False):
        """After a fault, start the snapshot that ends it (`Guard.recover`)."""
        self._guard.recover(now)

    def close(self):
        """Sync and close (a clean stop); the directory is free for another process."""
        appending, faults, compaction = self.appending, self.faults, self.compaction
        if appending.closed:
            return
        appending.closing = True
        if faults.failure is not None and appending.fd is not None:
            # what memory holds is all there is of the data: finish its snapshot
            self.recover(now=True)
            if faults.recovering:
                compaction.wait(CLOSE_WAIT)
            if faults.failure is not None:
                log.error("The embedded store's journal in %s was not made durable again before "
                          "the stop (%s): what this process held is lost, and the next start "
                          "refuses the directory (docs/reliability.md: Recovering a data "
                          "directory).", self.directory, faults.failure)
        if compaction.child is not None:  # abandoned: the next compaction starts afresh
            compaction.abandon()
        if appending.fd is not None:
            appending.drain()  # the queued writes end first
        appending.close()
        atexit.unregister(self.close)
