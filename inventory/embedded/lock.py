"""The embedded store's one lock, and the turns it gives out: a scheduler
for threads, and for greenlets under gevent, where holding it holds the loop.

Every operation of the embedded store runs under this one (reentrant) lock,
which makes each whole operation atomic. Two rules keep any holder from
keeping it (and, under gevent, the loop) for long:

- Turns: a thread that has held it for TURN_SECONDS over a sequence of
  operations (a forced delete's cascade) lets others run at its next release.
- Slices: a long walk (a page, a summary's pass, a look over every record)
  lets others in between slices of SLICE_SECONDS, where no caller above it
  relies on holding it; the long ones take their turns one at a time
  (LONG_WALKS), so that short ones pass them.

The design, and why: docs/design/embedded-store.md ("Long walks")."""
import threading
import time

from inventory.core.turns import let_others_run as yield_to_others  # a module global: tests patch it

SLICE_SECONDS = 0.002  # a walk's time under the lock before it lets others in
TURN_SECONDS = 0.005  # a thread's time under the lock, over operations, before others go
CLOCK_EVERY = 16  # entries examined between looks at the clock
LONG_WALKS = threading.Semaphore(1)  # long walks advance one at a time
SLICE_DOCUMENTS = 512  # documents a summary's pass reads between looks at the clock
LONG_WALK_ENTRIES = 256  # entries examined that make a walk long: more than a page's


class StoreLock:
    """The store's one lock (reentrant), knowing how deeply the current
    thread holds it: a long walk lets go of it only where no caller above
    relies on holding it.

    It also keeps each thread's time under it since the thread last let
    others run: a sequence of operations (a forced delete's cascade, one
    event per removed record) lets others run between two of them once it
    has held the lock for TURN_SECONDS, as one long walk does between its
    slices. Under gevent that bounds how long such a sequence holds the loop.
    A thread that stayed away from the lock that long (it waited for a
    client or the disk) starts a new turn: requests one after another on a
    connection do not add up to a turn."""

    def __init__(self):
        self._lock = threading.RLock()
        self._held = threading.local()  # greenlet-local under gevent

    def acquire(self):
        self._lock.acquire()
        held = self._held
        held.depth = getattr(held, "depth", 0) + 1
        if held.depth == 1:
            held.since = now = time.perf_counter()
            # away from the lock for a turn's length since its last hold: it
            # waited for something (a client, the disk), and others ran
            if now - getattr(held, "left", now) > TURN_SECONDS:
                held.used = 0.0

    def release(self):
        """Release; True when this let others run (the turn was used up)."""
        held = self._held
        held.depth -= 1
        if held.depth:
            self._lock.release()
            return False
        held.left = now = time.perf_counter()
        held.used = getattr(held, "used", 0.0) + now - held.since
        self._lock.release()
        if held.used <= TURN_SECONDS:
            return False
        self.let_others_run()
        return True

    def let_others_run(self):
        """Between two slices of a walk: others go first; the turn starts anew."""
        self._held.used = 0.0
        yield_to_others()

    def __enter__(self):
        self.acquire()

    def __exit__(self, *exc):
        self.release()

    def held_once(self):
        return getattr(self._held, "depth", 0) == 1


LOCK = StoreLock()


def let_others_in(queued, long):
    """Between two slices of a walk: release the lock, wait for the long
    walks' turn if this walk is `long` (and not `queued` already) and for
    others to run, take the lock back. True: this walk holds its turn among
    the long ones (give it back with `end_walk`)."""
    others_ran = LOCK.release()
    try:
        if long and not queued:
            LONG_WALKS.acquire()
            queued = True
        if not others_ran:
            LOCK.let_others_run()
    finally:
        LOCK.acquire()
    return queued


def end_walk(queued):
    """At a walk's end: give back the long walks' turn if it held it."""
    if queued:
        LONG_WALKS.release()
