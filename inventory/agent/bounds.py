"""How far the agent goes, so that a hostile or broken API server (or
inventory) costs it a bounded time and memory, within its CronJob's limits
(docs/agent.md, "Bounds"): a deadline for the whole run, a time for each
answer whole (not only between two bytes of it), and caps on what one
answer, the list of nodes and `/metrics` may hold. Past any of them the
run fails with one line and its kind's exit code.

Time is kept with SIGALRM, which interrupts a blocking read wherever it
is: a socket's timeout only bounds the wait between two bytes, and an
answer that drips a byte a second never trips it. Off the main thread
(where no signal is delivered) the same bounds are checked between reads,
and the sockets' timeouts bound each wait.
"""
import math
import signal
import threading
import time
from contextlib import contextmanager

DEFAULT_DEADLINE = 240.0  # seconds for a whole run: its three tries (backoffLimit 2) fit the CronJob's 900
MAX_DEADLINE = 3600.0
MAX_ANSWER_BYTES = 16 << 20  # one JSON answer from the API server (a page of nodes, a DaemonSet)
MAX_ANSWER_VALUES = 1_000_000  # JSON values (counted by their commas) in one such answer
MAX_ERROR_BYTES = 64 << 10  # of a refusal's body, read for its message
MAX_METRICS_BYTES = 256 << 20  # of `/metrics` (an API server's is some tens of MiB)
MAX_METRICS_LINE = 64 << 10  # one line of `/metrics`
MAX_METRICS_APIS = 50_000  # distinct APIs counted in `apiserver_request_total`
MAX_PAGES = 10_000  # of one list (5,000 nodes are 10 pages of 500)
MAX_NODES = 1_000_000  # nodes listed: the most a scan records (the inventory's `nodes.count`)
MAX_CONTINUE = 16 << 10  # characters of a continue token (a real one is a few hundred)
MAX_DISTINCT_VALUES = 10_000  # values tallied per node field (the scan keeps the 100 most common)
# The peak memory (RSS) these caps keep a run under, documented with the
# CronJob's limit of 256Mi (tests/unit/agent/test_bounds.py measures it).
MAX_RSS_MIB = 200


class DeadlineExceeded(BaseException):
    """The run's deadline passed. A BaseException, as `AnswerTimedOut`, so
    that no library's `except Exception` takes it for its own failure."""

    def __init__(self, failure):
        super().__init__(str(failure))
        self.failure = failure  # the Failure to say: the kind of what was being done


class AnswerTimedOut(BaseException):
    """One answer did not come whole within its time."""


class Clock:
    """The run's deadline and the time each answer may take."""

    def __init__(self, deadline=DEFAULT_DEADLINE, answer_seconds=30.0):
        self.deadline_seconds, self.answer_seconds = deadline, answer_seconds
        self.deadline = math.inf
        self.doing = None  # the Failure class of what is being done (ClusterError, InventoryError)
        self._answer_ends = None
        self._previous = None
        self._alarms = False

    def start(self, doing):
        self.deadline = time.monotonic() + self.deadline_seconds
        self.doing = doing
        self._alarms = (threading.current_thread() is threading.main_thread()
                        and hasattr(signal, "setitimer"))
        if self._alarms:
            self._previous = signal.signal(signal.SIGALRM, self._expired)
            self._arm()

    def stop(self):
        if self._alarms:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self._previous or signal.SIG_DFL)
            self._alarms = False

    def remaining(self):
        return self.deadline - time.monotonic()

    def socket_timeout(self):
        """Seconds a socket may wait for a byte: the answer's time, and never past the deadline."""
        return max(min(self.answer_seconds, self.remaining()), 0.001)

    @contextmanager
    def answer(self):
        """One request and its whole answer: AnswerTimedOut past its time,
        DeadlineExceeded past the run's."""
        self._answer_ends = time.monotonic() + self.answer_seconds
        self._arm()
        try:
            yield
        finally:
            self._answer_ends = None
            self._arm()

    def check(self):
        """Where no alarm rings: the same bounds, checked between reads."""
        now = time.monotonic()
        if now >= self.deadline:
            self._deadline_passed()
        if self._answer_ends is not None and now >= self._answer_ends:
            raise AnswerTimedOut()

    def _arm(self):
        if not self._alarms:
            return
        ends = min(self.deadline, self._answer_ends or math.inf)
        signal.setitimer(signal.ITIMER_REAL, max(ends - time.monotonic(), 0.001))

    def _expired(self, signum, frame):
        now = time.monotonic()
        if now >= self.deadline - 0.01:
            self._deadline_passed()
        if self._answer_ends is not None and now >= self._answer_ends - 0.01:
            raise AnswerTimedOut()
        self._arm()  # rang for an answer that has since ended: ring again when due

    def _deadline_passed(self):
        self._answer_ends = None
        if self._alarms:
            signal.setitimer(signal.ITIMER_REAL, 0)
        raise DeadlineExceeded(self.doing(
            f"the run's deadline of {self.deadline_seconds:g} s passed (--deadline)"))
