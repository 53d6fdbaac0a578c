"""The data directory of one embedded database: the names of its files,
the lock that makes one process its owner, and the two ways it refuses a
start (`DataDirectoryInUse`, `JournalCorrupt`); with the file system's
durable moves the journal's parts share (a file written atomically, a
directory's entries synced).

Its files, and why: docs/design/journal.md"""
import fcntl
import logging
import os
import re
import time

# the journal's parts log as one (inventory.embedded.journal), as operators filter it
log = logging.getLogger("inventory.embedded.journal")

# How long a start waits for a previous owner of the directory to exit
# (gunicorn overlaps old and new workers on a reload) before refusing.
LOCK_WAIT = 10.0
FILE = re.compile(r"(snapshot|journal)-(\d+)\.(jsonl|bson)\Z")


class DataDirectoryInUse(RuntimeError):
    """Another process owns the data directory."""


class JournalCorrupt(RuntimeError):
    """A journal or snapshot line cannot be read, or data the directory held
    is gone; nothing was changed."""


class DataDirectory:
    """A data directory (made if missing), locked by this process until `unlock`."""

    def __init__(self, path, lock_wait=LOCK_WAIT):
        self.path = os.path.abspath(path)
        self.lock_fd = None
        os.makedirs(self.path, exist_ok=True)
        self._lock(lock_wait)

    def file(self, kind, number, extension=None):
        """The path of snapshot or journal segment `number`."""
        extension = extension or ("bson" if kind == "snapshot" else "jsonl")
        return os.path.join(self.path, f"{kind}-{number:06d}.{extension}")

    def join(self, name):
        return os.path.join(self.path, name)

    def numbers(self):
        """The numbers of the snapshots and segments there."""
        return [int(match[2]) for match in map(FILE.match, os.listdir(self.path)) if match]

    def _lock(self, wait):
        self.lock_fd = os.open(self.join("lock"), os.O_RDWR | os.O_CREAT, 0o644)
        deadline, warned = time.monotonic() + wait, False
        while True:
            try:
                fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                owner = os.pread(self.lock_fd, 32, 0).decode(errors="replace").strip() or "?"
                if time.monotonic() >= deadline:
                    os.close(self.lock_fd)
                    raise DataDirectoryInUse(
                        f"The data directory {self.path} is in use by another process "
                        f"(pid {owner}); only one process may own it. Stop that process, or "
                        "set INVENTORY_DATA_DIR to another directory.") from None
                if not warned:
                    log.warning("Waiting up to %.0f s for process %s to release the data "
                                "directory %s.", wait, owner, self.path)
                    warned = True
                time.sleep(0.1)
        os.ftruncate(self.lock_fd, 0)
        os.pwrite(self.lock_fd, f"{os.getpid()}\n".encode(), 0)

    def unlock(self):
        """Let the directory go (closing the lock file releases the flock)."""
        os.close(self.lock_fd)

    def fault_in_lock(self):
        """Why the lock file at its path is no longer the one this process
        holds (another process could take the directory), or None."""
        lock = self.join("lock")
        try:
            if identity(os.stat(lock)) != identity(os.fstat(self.lock_fd)):
                return f"{lock} was replaced by another file"
        except FileNotFoundError:
            return f"{lock} was deleted (another process could take the directory)"
        return None

    def own_the_lock_file(self):
        """The lock file at its path is this process's again (made anew when
        removed), or DataDirectoryInUse: another process took the directory."""
        path = self.join("lock")
        try:
            if identity(os.stat(path)) == identity(os.fstat(self.lock_fd)):
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
                f"Another process (pid {owner}) took the data directory {self.path} "
                "after this process's lock file was removed; this process refuses writes "
                "until it restarts.") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        os.close(self.lock_fd)
        self.lock_fd = fd


def identity(stat):
    """What makes a file that file: its inode and device."""
    return stat.st_ino, stat.st_dev


def size_fault(path, size, written):
    """Why a file of `size` bytes is not the `written` bytes this process left, or None."""
    if size < written:
        return f"{path} was truncated in place ({size} bytes; this process wrote {written})"
    if size > written:
        return (f"{path} was written to by another process ({size} bytes; this process "
                f"wrote {written})")
    return None


def remove_all(paths):
    for path in paths:
        remove(path)


def remove(path):
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError as error:  # (a directory in the way): left, and said
        log.warning("Could not remove %s: %s", path, error)


def write_atomically(path, data):
    with open(path + ".tmp", "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    os.replace(path + ".tmp", path)


def sync_directory(directory):
    """Make a file's creation or renaming in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
