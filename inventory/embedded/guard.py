"""The guard: once a second, a check that the files the next start reads
are those this process wrote; after a fault (`faults`), a full snapshot of
what memory holds, from a forked child, as the first file of a new chain,
which ends the fault once it is on disk.

Why a fork here, and what the loop waits for: docs/design/journal.md (A journal cannot be lost quietly)"""
import logging
import os
import time

from inventory.embedded.data_directory import DataDirectoryInUse
from inventory.embedded.snapshot_writers import fork_snapshot
from inventory.embedded.unpatched import blocking

# the journal's parts log as one (inventory.embedded.journal), as operators filter it
log = logging.getLogger("inventory.embedded.journal")

# How often the guard checks that the files are those this process wrote.
GUARD_EVERY = 1.0


class Guard:
    """The guard's rounds over a journal's parts."""

    def __init__(self, directory, chain, appending, faults, compaction, tracker):
        self.directory, self.chain, self.appending = directory, chain, appending
        self.faults, self.compaction, self.tracker = faults, compaction, tracker

    def start(self, lock, every=GUARD_EVERY):
        """Check the files every `every` seconds, and after a fault write a
        snapshot under `lock` (the store's), from a thread (under gevent a
        greenlet, which waits for the checks in the hub's thread pool)."""
        import threading  # (gevent's, when patched: the lock below is gevent's too)

        def run():
            while not self.appending.closed:
                time.sleep(every)
                try:
                    self.check(lock)
                except Exception:  # noqa: BLE001 - the guard goes on
                    log.exception("The journal's guard failed a round; it goes on.")
        threading.Thread(target=run, name="journal-guard", daemon=True).start()

    def inspect(self):
        """Check that the files are those this process wrote (a few stat
        calls); a fault found refuses writes until a snapshot is written.
        The reason, or None."""
        appending = self.appending
        if appending.closed or appending.fd is None:
            return None
        with self.chain.mutex:
            fault = self.faults.in_files(appending.fd)
        if fault is not None:
            self.faults.fail(fault)
        return fault

    def check(self, lock):
        """One round: inspect the files; after a fault, start or finish the
        snapshot that ends it; else keep the manifest's record of the synced
        size up to date."""
        appending, faults, compaction = self.appending, self.faults, self.compaction
        if appending.closed:
            return
        blocking(self.inspect)
        if faults.failure is not None or compaction.child is not None:
            with lock:
                if compaction.child is not None:
                    compaction.reap()
                if faults.failure is not None:
                    self.recover()
        elif appending.unwritten:  # (a full disk) tried again without waiting for a write
            appending.retry_unwritten()
        elif self.chain.recorded_is_behind():
            blocking(self.chain.record)

    def recover(self, now=False):
        """After a fault (the store's lock held): start writing a full
        snapshot of memory in a child, as the first file of a new chain;
        writes are accepted again when it is on disk (`Compaction.reap`).
        `now`: do not wait for the retry's backoff."""
        directory, appending, faults, compaction = \
            self.directory, self.appending, self.faults, self.compaction
        if faults.failure is None or not faults.recoverable or appending.closed:
            return
        if compaction.child is not None:
            if faults.recovering:
                return  # under way
            compaction.abandon()  # a compaction of files that failed
        if not now and time.monotonic() < faults.retry_at:
            return
        started = time.perf_counter()
        appending.drain()  # every line queued is written or refused: memory holds them all
        ended = appending.fd
        try:
            os.makedirs(directory.path, exist_ok=True)
            directory.own_the_lock_file()
            number = max([self.chain.segment, *directory.numbers()]) + 1  # after every file there
            try:
                appending.open_segment(number, new_chain=True)
            finally:
                if appending.fd is not ended:
                    appending.retire(ended)
            appending.unwritten = []  # refused, yet in memory: the snapshot holds them
            pid = fork_snapshot(directory, self.tracker, number)
        except DataDirectoryInUse as error:
            faults.unrecoverable(error)
            return
        except OSError as error:
            faults.retry_later(str(error))
            return
        compaction.child, faults.recovering = (pid, number), True
        compaction.last_pause = {"fsync_ms": 0.0,
                                 "total_ms": (time.perf_counter() - started) * 1000}
        log.error("The embedded store's journal in %s: writing a full snapshot of what this "
                  "process holds into %s (pid %d); the store waited %.0f ms.", directory.path,
                  directory.file("snapshot", number), pid, compaction.last_pause["total_ms"])
