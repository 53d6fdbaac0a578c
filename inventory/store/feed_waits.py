"""Waiting for the feed: a reader at the head waits until an event it may
see is committed, woken by this process's own commits at once and by other
processes' (on a shared database) through one poller per process. Waiters
sleep on their scope's condition, so a commit wakes only those that may see
its event. A waiter holds no thread, no connection and no loop.

`FeedWaits` is this part of the feed (inventory.store.events.EventStore)."""
import threading
import time

ALL = object()  # an announced event whose organization is not known
# On MongoDB, how often one poller per process reads the newest slot for its waiters.
POLL_SECONDS = 0.5


class FeedWaits:
    """The feed's waiters, and the commits that wake them."""

    def __init__(self):
        # Whether other processes write the same feed (MongoDB), so that
        # waiters must poll for their events too.
        self.shared = False
        self._lock = threading.RLock()
        self._committed = threading.Condition(self._lock)  # unscoped waiters
        self._scoped = {}  # organization: its waiters' Condition
        self._heads = {}  # organization: the newest slot of its events this process saw
        self.wakeups = 0  # waits woken by a commit, not timed out (for the tests: a
        # commit wakes only its scope's; a stream's or wait's look each second is none)
        self._head = None  # the newest slot this process has seen filled
        self._waiting = 0
        self._wakes = 0  # counts wake_all()s
        self._polling = False
        # Called with each commit's organization (None: of none; ALL: not
        # known), under the feed's lock: they must only note it (the
        # webhooks' deliverer wakes for the organizations that have webhooks).
        self.listeners = []

    @property
    def seen_head(self):
        """The newest slot this process has seen filled ("" before any):
        what a wait for the next commit waits after."""
        return self._head or ""

    def _announce(self, slot, organization=ALL):
        """`slot` is filled, with an event of `organization` (None: of no
        organization; ALL: not known, as when another process's is seen)."""
        with self._lock:
            if self._head is None or slot > self._head:
                self._head = slot
            scopes = list(self._scoped) if organization is ALL else \
                [] if organization is None else [organization]
            for scope in scopes:
                if self._heads.get(scope) is None or slot > self._heads[scope]:
                    self._heads[scope] = slot
                waiters = self._scoped.get(scope)
                if waiters is not None:
                    waiters.notify_all()
            self._committed.notify_all()
            for listener in self.listeners:
                listener(organization)

    def wake_all(self):
        """Wake every waiter to look again (a token was revoked): their waits
        end with False, as if their time was up."""
        with self._lock:
            self._wakes += 1
            self._committed.notify_all()
            for waiters in self._scoped.values():
                waiters.notify_all()

    def wait(self, after, seconds, scope=None):
        """Wait until an event after slot `after` that a caller confined to
        `scope` (an organization; None: all) may see may be in the feed
        (True), or `seconds` pass (False). Only commits of events in that
        scope wake it. This process's own writes wake waiters at once; other
        processes' (on a shared database) are seen by one poller per
        process, reading the newest slot every POLL_SECONDS while anyone
        waits (and waking every scope: it cannot tell whose they are)."""
        deadline = time.monotonic() + seconds
        if self.shared:
            self._poll_while_waited()
        with self._lock:
            if scope is None:
                waiters, head = self._committed, lambda: self._head
            else:
                waiters = self._scoped.setdefault(scope, threading.Condition(self._lock))
                head = lambda: self._heads.get(scope)  # noqa: E731
            self._waiting += 1
            woken = self._wakes
            try:
                while head() is None or (after is not None and head() <= after):
                    remaining = deadline - time.monotonic()
                    if remaining <= 0 or self._wakes != woken:
                        return False
                    if waiters.wait(remaining):  # woken, not timed out
                        self.wakeups += 1
                return True
            finally:
                self._waiting -= 1

    def _poll_while_waited(self):
        with self._lock:
            if self._polling:
                return
            self._polling = True

        def poll():
            try:
                while True:
                    time.sleep(POLL_SECONDS)
                    with self._lock:
                        if not self._waiting:
                            self._polling = False
                            return
                    try:
                        newest = self.end_slot(-1)
                    except Exception:  # the database may be away: poll again
                        continue
                    if newest is not None and (self._head is None or newest > self._head):
                        self._announce(newest)
            except BaseException:
                self._polling = False
                raise
        threading.Thread(target=poll, name="event-poller", daemon=True).start()
