"""Compaction, as an LSM tree merges its files: when the segments since the
snapshot outgrow a threshold, the segment is ended and a child process
writes the next snapshot (`snapshot_writers`); once it is in place the
older files go. The child's end is also where a fault's snapshot lands.

The threshold, the pause it costs and why: docs/design/journal.md"""
import logging
import os
import signal
import time

from inventory.core.errors import Unavailable
from inventory.embedded.data_directory import FILE, identity, remove, remove_all
from inventory.embedded.snapshot_writers import fork_snapshot, spawn_merge
from inventory.embedded.unpatched import blocking, original

# the journal's parts log as one (inventory.embedded.journal), as operators filter it
log = logging.getLogger("inventory.embedded.journal")

# Compact when the segments since the snapshot reach this, or a quarter of
# the snapshot if larger (Redis' auto-aof-rewrite-min-size and -percentage).
COMPACT_AT = 64 * 1024 * 1024


class Compaction:
    """The child writing a snapshot, if any (a compaction's, or a fault's),
    and when the next compaction starts."""

    def __init__(self, directory, chain, appending, faults, tracker, compact_at=COMPACT_AT):
        self.directory, self.chain, self.appending = directory, chain, appending
        self.faults, self.tracker = faults, tracker
        self.compact_at = compact_at
        self.next_at = compact_at  # bytes of segments that start the next
        self.child = None  # (pid, snapshot number) of a compaction running
        self.from_memory = False  # the next compaction forks: a merge of the files failed
        # {"fsync_ms", "total_ms"} the last compaction (or a fault's snapshot) held the lock
        self.last_pause = None

    def threshold(self):
        """Bytes of segments that start a compaction: a start then replays at
        most 1.25 snapshots' worth (start-up time is what this bounds)."""
        return max(self.compact_at, self.chain.snapshot_size // 4)

    def maybe(self):
        """Start a compaction if the segments have reached the threshold."""
        if self.child is None and self.faults.failure is None \
                and sum(self.chain.sizes.values()) >= self.next_at:
            try:
                self.start()
            except OSError as error:  # no fork (memory), no new segment (disk): later
                log.error("Journal compaction could not start: %s", error)
                self.next_at = sum(self.chain.sizes.values()) + self.compact_at

    def start(self):
        """Start a snapshot of the current data in a child process (the
        store's lock held, or nothing else running); its pid. The child
        merges the files (the snapshot and the ended segments), a process of
        its own (posix_spawn): a fork would copy the page tables of the
        whole store in the event loop, 90 ms at 3 GB. After a merge that
        failed (a file it could not read), the next one forks and writes
        what memory holds, as a fault's snapshot does."""
        if self.child is not None:
            return self.child[0]
        if self.faults.failure is not None:
            raise Unavailable(self.faults.refusal)
        directory, chain, appending = self.directory, self.chain, self.appending
        appending.drain()  # every line so far in the ending segment, none in flight
        number = chain.segment + 1
        ended = appending.fd
        started = time.perf_counter()
        appending.sync(ended)  # every segment but the last is whole on disk
        synced = time.perf_counter()
        with chain.mutex:  # from now on the guard checks it as an ended segment
            chain.files[directory.file("journal", chain.segment)] = (
                *identity(os.fstat(ended)), chain.sizes[chain.segment])
        # what the new snapshot merges: the snapshot and the segments before `number`
        merged = [chain.snapshot_path or "",
                  *(directory.file("journal", n) for n in sorted(chain.sizes) if n < number)]
        appending.open_segment(number)
        appending.retire(ended)
        pid = None
        if not self.from_memory:
            try:
                pid = spawn_merge(directory.file("snapshot", number), merged)
            except OSError as error:  # no interpreter to run: from memory
                log.error("Journal compaction could not start its merge (%s); it forks.", error)
        if pid is None:
            pid = fork_snapshot(directory, self.tracker, number)
        self.child = (pid, number)
        # what the writes waited for (Redis reports its latest_fork_usec alike)
        self.last_pause = {"fsync_ms": (synced - started) * 1000,
                           "total_ms": (time.perf_counter() - started) * 1000}
        log.info("Journal compaction into snapshot %d started (pid %d); the store waited "
                 "%.0f ms, %.0f of them for the fsync of the ended segment.", number, pid,
                 self.last_pause["total_ms"], self.last_pause["fsync_ms"])
        return pid

    def reap(self):
        """Finish a compaction (or a fault's snapshot) whose child has exited."""
        pid, number = self.child
        try:
            done, status = original("os", "waitpid")(pid, os.WNOHANG)
        except ChildProcessError:  # reaped by someone else (gevent's SIGCHLD watcher)
            done, status = pid, None
        if not done:
            return
        self.child = None
        directory, chain, faults = self.directory, self.chain, self.faults
        path = directory.file("snapshot", number)
        try:
            stat = os.stat(path) if status in (0, None) else None
        except FileNotFoundError:
            stat = None
        if stat is None:
            remove(path + ".tmp")
            if faults.recovering:
                faults.retry_later(f"the snapshot's child failed (exit status {status})")
                return
            log.error("Journal compaction into %s failed (exit status %s); the journal is "
                      "kept as it is and compaction is tried again later, from memory.",
                      path, status)
            self.from_memory = True
            self.next_at = sum(chain.sizes.values()) + self.threshold()
            return
        with chain.mutex:  # the guard sees the old files or the new, never half
            for old in [n for n in chain.sizes if n < number]:
                del chain.sizes[old]
            chain.snapshot, chain.snapshot_size = number, stat.st_size
            chain.snapshot_path = path
            chain.files = {path: (*identity(stat), stat.st_size)}
            # what the snapshot holds: removed once the manifest names the snapshot
            stale = [directory.join(name) for name in os.listdir(directory.path)
                     if (match := FILE.match(name)) and int(match[2]) < number]
        closing = self.appending.closing
        try:
            chain.record_off_the_loop(closing)
        except OSError as error:  # the directory is failing: a fault, however it started
            if faults.recovering:
                faults.retry_later(f"the manifest could not be written ({error})")
            else:
                faults.fail(f"the manifest could not be written ({error})")
            return
        # Unlinking a snapshot of hundreds of megabytes takes the file system
        # tens of milliseconds: in the thread pool, as the manifest's fsyncs.
        if closing:
            remove_all(stale)
        else:
            blocking(remove_all, stale)
        self.next_at = self.threshold()
        self.from_memory = False
        if faults.recovering:
            faults.ended(path)
        else:
            log.info("Journal compacted into %s (%d bytes).", path, chain.snapshot_size)

    def abandon(self):
        """Kill the child and forget its snapshot: the next starts afresh."""
        try:
            os.kill(self.child[0], signal.SIGKILL)
            original("os", "waitpid")(self.child[0], 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        remove(self.directory.file("snapshot", self.child[1]) + ".tmp")
        self.child, self.faults.recovering = None, False

    def wait(self, timeout=60.0):
        """Wait until a running compaction ends (for tests and the bench)."""
        deadline = time.monotonic() + timeout
        while self.child is not None and time.monotonic() < deadline:
            self.reap()
            if self.child is not None:
                time.sleep(0.01)
        return self.child is None
