"""A fault: the files the next start reads are no longer what this process
wrote (deleted, replaced, truncated, written to by another), or a write
of them failed. Writes are refused, with the reason, from the fault until
a full snapshot of what memory holds is on disk; that snapshot is retried
with a backoff when it fails.

Noticing and refusing, and why: docs/design/journal.md (A journal cannot be lost quietly)"""
import logging
import os
import time

from inventory.embedded.data_directory import identity, size_fault

# the journal's parts log as one (inventory.embedded.journal), as operators filter it
log = logging.getLogger("inventory.embedded.journal")

# Seconds between attempts to write a snapshot after a fault, doubling up to the last.
RETRY_BACKOFF = (1.0, 30.0)


class Faults:
    """Whether writes are refused for a fault, and the snapshot that ends it."""

    def __init__(self, directory, chain):
        self.directory, self.chain = directory, chain
        self.failure = None  # why appends are refused (a fault): until a snapshot is written
        self.recoverable = True  # False: refused until a restart (another process owns the dir)
        self.recovering = False  # the child running writes the snapshot that ends a fault
        self.retry_at, self.backoff = 0.0, RETRY_BACKOFF[0]

    @property
    def refusal(self):
        """Why writes are refused for a fault, or None."""
        if self.failure is None:
            return None
        if not self.recoverable:
            return (f"The embedded store's journal in {self.directory.path} failed "
                    f"({self.failure}); writes are refused until the service restarts.")
        return (f"The embedded store's journal in {self.directory.path} failed "
                f"({self.failure}); writes are refused until this process has written a full "
                "snapshot of what it holds, which it is doing; try again shortly.")

    def fail(self, reason):
        """Refuse appends from now on: what is on disk is not what was acknowledged."""
        if self.failure is None:
            self.failure = reason
            log.error("The embedded store's journal in %s failed: %s. Writes are refused until "
                      "this process has written a full snapshot of what it holds in memory "
                      "(every acknowledged write); it starts writing one now.",
                      self.directory.path, reason)

    def in_current(self, fd):
        """Why the segment appended to (open as `fd`) is no longer what this
        process wrote, or None; the chain's mutex held. The next start would
        replay the file at the path."""
        chain = self.chain
        path = self.directory.file("journal", chain.segment)
        try:
            at_path, open_ = os.stat(path), os.fstat(fd)
        except FileNotFoundError:
            return f"{path} was deleted"
        if identity(at_path) != identity(open_):
            return f"{path} was replaced by another file"
        return size_fault(path, open_.st_size, chain.sizes[chain.segment])

    def in_files(self, fd):
        """Why the files the next start reads are not those this process
        left, or None; the chain's mutex held."""
        fault = self.directory.fault_in_lock()
        if fault is not None:
            return fault
        for path, (inode, device, size) in self.chain.files.items():
            try:
                stat = os.stat(path)
            except FileNotFoundError:
                return f"{path} was deleted"
            if identity(stat) != (inode, device):
                return f"{path} was replaced by another file"
            fault = size_fault(path, stat.st_size, size)
            if fault is not None:
                return fault
        return self.in_current(fd)

    def unrecoverable(self, error):
        """Another process took the directory: refused until a restart."""
        self.recoverable = False
        self.failure = str(error)
        log.error("%s", error)

    def retry_later(self, why):
        """The snapshot that ends the fault failed: the next after the backoff."""
        self.recovering = False
        self.retry_at = time.monotonic() + self.backoff
        log.error("The embedded store's journal in %s could not write its snapshot after a "
                  "fault (%s); writes stay refused, and it tries again in %.0f s.",
                  self.directory.path, why, self.backoff)
        self.backoff = min(self.backoff * 2, RETRY_BACKOFF[1])

    def ended(self, path):
        """The snapshot at `path` holds every acknowledged write: accepted again."""
        self.recovering, self.failure = False, None
        self.backoff = RETRY_BACKOFF[0]
        log.error("The embedded store's journal in %s is durable again: %s (%d bytes) "
                  "holds every write this process acknowledged, and the files from before "
                  "the fault are deleted. Writes are accepted again.", self.directory.path,
                  path, self.chain.snapshot_size)
