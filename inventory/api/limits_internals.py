"""Every use the rate limits (inventory.api.limits) make of Flask-Limiter's
and limits' private internals, in one place.

limits' MemoryStorage restarts its expiry timer (`__schedule_expiry`)
without a lock: two threads at once may start the same timer, a
RuntimeError (a 500; tests/api/test_limits.py runs many threads at once). The
restart is serialised here, on the limiter's storage and on the in-memory
fallback Flask-Limiter keeps in `_fallback_storage`.

Written for Flask-Limiter==4.1.1 and limits==5.8.0 (requirements.txt pins
them). `check()` (run by tests/unit/test_private_internals.py) fails with a plain
message when an upgrade moves any of it.
"""
import threading

from flask import Flask
from flask_limiter import Limiter
from limits.storage import MemoryStorage

from inventory.pinned_versions import check_written_for

WRITTEN_FOR = {"Flask-Limiter": "4.1.1", "limits": "5.8.0"}
_SCHEDULE = "_MemoryStorage__schedule_expiry"


def serialise_expiry(limiter):
    """Serialise the expiry timer's restart in `limiter`'s memory storages."""
    for storage in (limiter.storage, getattr(limiter, "_fallback_storage", None)):
        if isinstance(storage, MemoryStorage):
            schedule, lock = getattr(storage, _SCHEDULE), threading.Lock()

            def scheduled(schedule=schedule, lock=lock):
                with lock:
                    schedule()
            setattr(storage, _SCHEDULE, scheduled)


def check():
    """Raise AssertionError, saying what moved and what to do, if the
    installed libraries are not the ones this module was written for."""
    advice = check_written_for(
        "inventory/api/limits_internals.py", WRITTEN_FOR,
        "see whether MemoryStorage still restarts its expiry timer without a lock (then adapt "
        "that module, the only one that touches it, and its WRITTEN_FOR; else remove it), and "
        "run tests/api/test_limits.py")
    assert callable(getattr(MemoryStorage(), _SCHEDULE, None)), \
        f"MemoryStorage.__schedule_expiry is gone. {advice}."
    limiter = Limiter(lambda: "key", app=Flask(__name__), storage_uri="memory://",
                      in_memory_fallback_enabled=True)
    assert isinstance(getattr(limiter, "_fallback_storage", None), MemoryStorage), \
        f"Flask-Limiter's Limiter no longer keeps its fallback in _fallback_storage. {advice}."
