"""The append log: commits queue their lines in order under the store's
lock, and one OS thread appends them to the current segment, so that
write(2) never runs in the event loop (a stalled or full disk stalls or
refuses the writers, never reads or /healthz); fsynced as INVENTORY_FSYNC
says. A line the disk refused waits, in order, for the next append.

Durability and the writer's wait, and why: docs/design/journal.md"""
import collections
import logging
import os

from inventory.core.errors import Unavailable
from inventory.embedded.unpatched import blocking, original

# the journal's parts log as one (inventory.embedded.journal), as operators filter it
log = logging.getLogger("inventory.embedded.journal")

FSYNC_POLICIES = ("always", "everysec", "no")
# How long a writer waits for its line on its own thread (under gevent, the
# loop's) before a pool thread waits instead: `AppendLog.written`.
BRIEF_WAIT = 0.0005


def fsync_policy(fsync):
    """`fsync` if it is one of FSYNC_POLICIES, else ValueError."""
    if fsync not in FSYNC_POLICIES:
        raise ValueError(f"INVENTORY_FSYNC is {fsync!r}; it must be one of "
                         f"{', '.join(FSYNC_POLICIES)}.")
    return fsync


class AppendLog:
    """The segment appended to (`fd`), its writer thread and its syncing."""

    def __init__(self, directory, chain, faults, fsync):
        self.directory, self.chain, self.faults, self.fsync = directory, chain, faults, fsync
        self.fd = None
        self.pending = False  # appended since the last fsync
        self.retired = []  # descriptors of ended segments, for the syncing thread to close
        self.closed = self.closing = False
        self.sync_lock = original("_thread", "allocate_lock")()
        self._queue = collections.deque()  # [line, done, error]: lines the writer thread appends
        self._queue_mutex = original("_thread", "allocate_lock")()
        self._work = original("_thread", "allocate_lock")()  # released: the queue has work
        self.unwritten = []  # lines that failed: written first by the next that can be
        self.unwritten_because = None  # why the first of them failed

    def start(self, number):
        """Append to segment `number`, from the writer thread; sync each second under `everysec`."""
        self.open_segment(number)
        original("_thread", "start_new_thread")(self._write_queued, ())
        if self.fsync == "everysec":
            original("_thread", "start_new_thread")(self._sync_every_second, ())

    @property
    def backlog(self):
        """Why writes wait (lines the disk refused, a full disk), or None."""
        if self.unwritten and self.unwritten_because:
            return (f"{self.unwritten_because} {len(self.unwritten)} refused writes wait "
                    "for the journal; they are tried again each second.")
        return None

    # -- the writer thread ---------------------------------------------------

    def queue_line(self, line):
        done = original("_thread", "allocate_lock")()
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
            blocking(done.acquire)  # under gevent a pool thread waits, not the loop
        if queued[2] is not None:
            log.error("%s", queued[2])
            raise Unavailable(queued[2])

    def retry_unwritten(self):
        """Write the lines the disk refused, without waiting for a write."""
        done = self.queue_line(b"")[1]
        if not done.acquire(False):
            blocking(done.acquire)

    def drain(self):
        """Wait until every queued line is written (a segment change, a close)."""
        queued = self.queue_line(None)
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
        lines, self.unwritten = [*self.unwritten, line], []
        for index, each in enumerate(lines):
            try:
                self._append(each)
            except Unavailable as error:
                self.unwritten = lines[index:]  # written first by the next that can be
                self.unwritten_because = error.detail
                raise

    def _append(self, line):
        faults, chain = self.faults, self.chain
        if faults.failure is not None:
            raise Unavailable(faults.refusal)
        if self.closed:
            raise Unavailable("The embedded store's journal is closed.")
        with chain.mutex:  # the size of the file is the size written, for the guard too
            fault = faults.in_current(self.fd)
            if fault is not None:
                faults.fail(fault)
                raise Unavailable(faults.refusal)
            current = chain.segment
            try:
                view = memoryview(line)
                while view:
                    view = view[os.write(self.fd, view):]
            except OSError as error:
                try:  # take back a partial line, so the next append does not follow it
                    os.ftruncate(self.fd, chain.sizes[current])
                except OSError as truncating:
                    faults.fail(f"a partial line could not be taken back ({truncating})")
                raise Unavailable(f"The embedded store's journal in {self.directory.path} "
                                  f"could not be written ({error.strerror}); try again shortly."
                                  ) from error
            chain.sizes[current] += len(line)
        self.pending = True
        if self.fsync == "always":
            self.sync(self.fd, offload=False)  # in the writer thread already
            chain.durable = (current, chain.sizes[current])

    # -- syncing -------------------------------------------------------------

    def sync(self, fd, offload=True):
        try:
            blocking(os.fsync, fd) if offload else os.fsync(fd)
        except OSError as error:  # the kernel may have dropped the pages: stop here
            self.faults.fail(f"fsync failed: {error}")
            raise Unavailable(f"The embedded store's journal in {self.directory.path} could "
                              f"not be synced ({error.strerror}).") from error

    def _sync_every_second(self):
        """An OS thread (under gevent too): fsync what was appended, once a second."""
        sleep = original("time", "sleep")
        while True:
            sleep(1)
            with self.sync_lock:
                if self.closed:
                    return
                self.sync_pending()

    def sync_pending(self):
        if self.pending:
            self.pending = False
            with self.chain.mutex:
                fd, segment = self.fd, self.chain.segment
                size = self.chain.sizes.get(segment, 0)  # written before the fsync starts
            try:
                os.fsync(fd)
            except OSError as error:
                self.faults.fail(f"fsync failed: {error}")  # the next append raises
            else:
                self.chain.durable = (segment, size)
        while self.retired:
            os.close(self.retired.pop())

    # -- segments ------------------------------------------------------------

    def open_segment(self, number, new_chain=False):
        """Append to segment `number` from now on. `new_chain`: after a fault,
        it follows snapshot `number`, which is being written, and no earlier file."""
        fd = os.open(self.directory.file("journal", number),
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(fd).st_size
        if size:
            os.fsync(fd)  # the manifest records only what is on disk
        chain = self.chain
        with chain.mutex:
            if new_chain:
                chain.snapshot, chain.snapshot_size, chain.snapshot_path = number, 0, None
                chain.sizes, chain.files = {}, {}
            self.fd, chain.segment, chain.durable = fd, number, (number, size)
            chain.sizes.setdefault(number, 0)
        chain.record_off_the_loop(self.closing)

    def retire(self, fd):
        """Close an ended segment's descriptor (under `everysec`, the syncing thread does)."""
        if self.fsync == "everysec":
            self.retired.append(fd)
        else:
            os.close(fd)

    def close(self):
        """Sync what was appended, close the segment and record the size it
        ended at (unless a fault: the manifest keeps the chain's last record);
        the directory is let go."""
        with self.sync_lock:
            self.closed = True
            if self.fd is not None:
                try:
                    self.retired.append(self.fd)
                    self.pending = True
                    self.sync_pending()
                    if self.faults.failure is None:
                        self.chain.record()  # the size the last segment ended at
                except OSError:
                    pass
            self.directory.unlock()
