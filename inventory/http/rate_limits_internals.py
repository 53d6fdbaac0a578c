"""Every use the rate limits (inventory.http.rate_limits) make of the limits
library's private internals, in one place.

limits' MemoryStorage restarts its expiry timer (`__schedule_expiry`)
without a lock: two threads at once may start the same timer, a
RuntimeError (a 500; tests/api/test_limits.py runs many threads at once). The
restart is serialised here, on each memory storage the counter uses (its
own on the embedded store, the fallback while MongoDB is away).

limits' MongoDB storage closes its client in `__del__` through the property
that makes the client: a storage that never connected connects (and waits
out server selection, a traceback at exit) only to close. Its `__del__` is
made to close a client that exists only.

Written for limits==5.8.0 (requirements.txt pins it). `check()` (run by
tests/unit/test_private_internals.py) fails with a plain message when an
upgrade moves any of it.
"""
import threading

from limits.storage import MemoryStorage
from limits.storage.mongodb import MongoDBStorageBase

from inventory.core.pinned_versions import check_written_for

WRITTEN_FOR = {"limits": "5.8.0"}
_SCHEDULE = "_MemoryStorage__schedule_expiry"


def serialise_expiry(storage):
    """Serialise the expiry timer's restart of `storage`, if it is a memory one."""
    if isinstance(storage, MemoryStorage):
        schedule, lock = getattr(storage, _SCHEDULE), threading.Lock()

        def scheduled():
            with lock:
                schedule()
        setattr(storage, _SCHEDULE, scheduled)


def _close_if_connected(storage):
    close = getattr(storage.__dict__.get("_storage"), "close", None)
    if close is not None:
        close()


MongoDBStorageBase.__del__ = _close_if_connected


def check():
    """Raise AssertionError, saying what moved and what to do, if the
    installed libraries are not the ones this module was written for."""
    advice = check_written_for(
        "inventory/http/rate_limits_internals.py", WRITTEN_FOR,
        "see whether MemoryStorage still restarts its expiry timer without a lock (then adapt "
        "that module, the only one that touches it, and its WRITTEN_FOR; else remove it), and "
        "run tests/api/test_limits.py")
    assert callable(getattr(MemoryStorage(), _SCHEDULE, None)), \
        f"MemoryStorage.__schedule_expiry is gone. {advice}."
    assert "_storage" in MongoDBStorageBase.__init__.__code__.co_names, \
        f"MongoDBStorageBase no longer keeps its client in `_storage`. {advice}."
