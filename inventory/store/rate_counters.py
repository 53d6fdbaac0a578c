"""Rate counters: each caller's requests counted against its rate limits.

The count is the `limits` library's sliding-window counter: a limit of
`amount` per `seconds` counts in fixed windows of `seconds`, and a request
is let through while the current window's count plus the previous window's,
weighted by how much of it the sliding window still overlaps, stays within
`amount`. A caller's limits are counted the shortest window first, and a
request one refuses counts in no later one. Every counter answers
(allowed, the index of the limit that refused it or else of the one with the
fewest requests left, how many, seconds until its window frees some), as
`limits` reckons them.

Where the counts live:

- `LocalRateCounter`: a dict of this process. The embedded store's (one
  process), and the shared counter's fallback while the database fails.
- `SharedRateCounter`: the database, for every worker and instance. One
  document per (caller, limit, window number), and a request counted by one
  conditional increment of its window's document (an upsert while the count
  is below what the previous window leaves room for): one atomic
  single-document write, so processes counting at once never let more
  through than the limit. Old windows go by a TTL index on `expires`, or by
  the service's retention sweep where the database refuses TTL indexes
  (Store.expiring, Store.sweep_expired).

The design, and why: docs/design/rate-limits.md"""
import logging
import math
import threading
import time
from datetime import datetime, timezone

import pymongo.errors
from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from inventory.core.errors import Unavailable

log = logging.getLogger(__name__)

CHECK_BACK_SECONDS = 30  # how often counting in memory looks whether the database is back
# A window's count is taken as final (kept by the process, not read again)
# once this long of the next window has passed: by then the increments sent
# in its last moments have landed, from this process and from others whose
# clocks are a little behind.
FINAL_AFTER_SECONDS = 1.0
SWEEP_EVERY = 4096  # hits between drops of what a counter keeps of windows that are over


def _window(seconds, now):
    """(number, seconds elapsed in it) of the window of `seconds` at `now`."""
    number = int(now // seconds)
    return number, now - number * seconds


def _room(amount, previous, seconds, elapsed):
    """How many requests the current window may hold, given the previous
    window's count weighted by how much of it still overlaps."""
    return amount - math.floor(previous * (seconds - elapsed) / seconds)


def _stats(amount, seconds, elapsed, previous, current):
    """(seconds until a request frees, requests left), as `limits` reckons them."""
    remaining = max(0, amount - math.floor(previous * (seconds - elapsed) / seconds + current))
    if not (previous or current):
        return 0.0, remaining
    previous_reset = (seconds - elapsed) % (seconds / previous) if previous else math.inf
    current_reset = (2 * seconds - elapsed) % seconds if current else math.inf
    return min(previous_reset, current_reset), remaining


def _answer(refused, stats):
    """The counter's answer from each counted limit's (reset, remaining)."""
    index = refused if refused is not None else min(
        range(len(stats)), key=lambda at: stats[at][1])
    reset, remaining = stats[index]
    return refused is None, index, remaining, max(0, math.ceil(reset))


class _Swept:
    """A counter that drops what it keeps of past windows every SWEEP_EVERY hits."""

    def __init__(self):
        self._lock = threading.Lock()
        self._hits = 0

    def _counted_hit(self, now):
        """Count a hit, sweeping when it is due (with the lock held)."""
        self._hits += 1
        if self._hits % SWEEP_EVERY == 0:
            self._sweep(now)


class LocalRateCounter(_Swept):
    """The counts in a dict of this process: a request costs a dictionary
    update (the `limits` library's memory storage cost 60 us, a quarter of a
    single-record GET)."""

    def __init__(self):
        super().__init__()
        self._windows = {}  # (key, amount, seconds) -> [window number, previous, current]

    def hit(self, limits, key):
        """Count a request of `key` against `limits`, (amount, seconds) pairs
        the shortest window first: (allowed, index of the limit named, left, reset)."""
        now = time.time()
        with self._lock:
            self._counted_hit(now)
            refused, stats = None, []
            for index, (amount, seconds) in enumerate(limits):
                number, elapsed = _window(seconds, now)
                entry = self._windows.get((key, amount, seconds))
                if entry is None:
                    entry = self._windows[(key, amount, seconds)] = [number, 0, 0]
                elif entry[0] != number:
                    entry[1] = entry[2] if entry[0] == number - 1 else 0
                    entry[0], entry[2] = number, 0
                if refused is None:
                    if entry[2] < _room(amount, entry[1], seconds, elapsed):
                        entry[2] += 1
                    else:
                        refused = index
                stats.append(_stats(amount, seconds, elapsed, entry[1], entry[2]))
        return _answer(refused, stats)

    def _sweep(self, now):
        for window_key in [window_key for window_key, (number, _, _) in self._windows.items()
                           if number < _window(window_key[2], now)[0] - 1]:
            del self._windows[window_key]


class SharedRateCounter(_Swept):
    """The counts in the database's `rate_windows`: one document per
    (caller, limit, window number), `{_id, n, expires}`, gone once it can be
    neither the current window nor the previous one. With `fallback`, while
    the database fails, counted in this process's memory, looking back every
    CHECK_BACK_SECONDS.

    Round trips a request: one conditional increment per limit counted; one
    read of a limit's previous window when this process does not know its
    final count yet (once per caller, limit and window, and each time in
    the first FINAL_AFTER_SECONDS of a window); one more on a refusal or
    when two processes make a window's document at once."""

    collection_name = "rate_windows"

    def __init__(self, db, fallback=True):
        super().__init__()
        self.collection = db[self.collection_name]
        self.fallback = LocalRateCounter() if fallback else None
        self._failed_at = None  # monotonic time the database last failed to count
        self._said = False  # whether this counter said so (and so says when it counts again)
        # the database's outage as this process knows it (inventory.store.outages),
        # on MongoDB: while it lasts, no look back (each would cost a request
        # MONGODB_TIMEOUT_MS on top of its own 503's), and no line of the
        # counter's own (the outage's says it)
        self.outage = None
        self._final = {}  # (key, amount, seconds) -> (window number, its final count)

    def hit(self, limits, key):
        """As LocalRateCounter.hit, counted in the database."""
        if self.fallback is not None and (self._away() or self._failed_at is not None and
                                          time.monotonic() - self._failed_at < CHECK_BACK_SECONDS):
            return self.fallback.hit(limits, key)
        try:
            answer = self._counted(limits, key)
        except (Unavailable, pymongo.errors.PyMongoError) as error:
            if self.fallback is None:
                if isinstance(error, Unavailable):
                    raise
                raise Unavailable("The rate counters cannot be written; try again "
                                  "shortly.") from error
            if not self._said and not self._away():  # once, not at every look back
                log.warning("Counting rates in the database failed: counting in this process's "
                            "memory, looking back every %s s.", CHECK_BACK_SECONDS,
                            exc_info=not isinstance(error, Unavailable))
                self._said = True
            self._failed_at = time.monotonic()
            return self.fallback.hit(limits, key)
        if self._said:
            log.warning("The database counts rates again.")
        self._failed_at, self._said = None, False
        return answer

    def _away(self):
        """Whether this process knows the database is away (an outage said)."""
        return self.outage is not None and self.outage.since is not None

    def _counted(self, limits, key):
        now = time.time()
        with self._lock:
            self._counted_hit(now)
        refused, stats = None, []
        for index, (amount, seconds) in enumerate(limits):
            if refused is not None:  # a refused request counts in no later limit
                stats.append(None)
                continue
            number, elapsed = _window(seconds, now)
            previous = self._previous(key, amount, seconds, number, elapsed)
            room = _room(amount, previous, seconds, elapsed)
            current = self._increment(key, amount, seconds, number, room)
            if current is None:  # full: its count is `room` or more, all that the
                # answer needs (none left, and whether it holds any). With no room
                # it holds none: room only grows as the window goes on.
                refused, current = index, max(room, 0)
            stats.append(_stats(amount, seconds, elapsed, previous, current))
        return _answer(refused, stats)

    @staticmethod
    def _key(key, amount, seconds, number):
        # the numbers first: the caller's key after them may hold any character
        return f"{amount}/{seconds}/{number}/{key}"

    def _increment(self, key, amount, seconds, number, room):
        """The window's count after this request's increment, or None when
        it is full (`room` or more). The upsert's filter does not match a
        full window's document, so it tries to insert one by the same `_id`:
        a duplicate key. So does an upsert that another made the document
        before: the same increment again, with no upsert, tells them apart."""
        if room <= 0:
            return None
        window = {"_id": self._key(key, amount, seconds, number), "n": {"$lt": room}}
        try:
            doc = self.collection.find_one_and_update(
                window, {"$inc": {"n": 1}, "$setOnInsert": {
                    "expires": _stored((number + 2) * seconds)}},
                upsert=True, return_document=ReturnDocument.AFTER)
        except DuplicateKeyError:
            doc = self.collection.find_one_and_update(
                window, {"$inc": {"n": 1}}, return_document=ReturnDocument.AFTER)
        return None if doc is None else doc["n"]

    def _count(self, key, amount, seconds, number):
        doc = self.collection.find_one({"_id": self._key(key, amount, seconds, number)})
        return 0 if doc is None else doc["n"]

    def _previous(self, key, amount, seconds, number, elapsed):
        """The previous window's count: read, and kept once it is final."""
        known = self._final.get((key, amount, seconds))
        if known is not None and known[0] == number:
            return known[1]
        count = self._count(key, amount, seconds, number - 1)
        if elapsed >= FINAL_AFTER_SECONDS:
            with self._lock:
                self._final[(key, amount, seconds)] = (number, count)
        return count

    def _sweep(self, now):
        for final_key in [final_key for final_key, (number, _) in self._final.items()
                          if number < _window(final_key[2], now)[0]]:
            del self._final[final_key]


def _stored(moment):
    """A time.time() moment as stored: naive UTC to the millisecond (what
    TTL indexes and the retention sweep compare)."""
    stored = datetime.fromtimestamp(moment, timezone.utc).replace(tzinfo=None)
    return stored.replace(microsecond=stored.microsecond // 1000 * 1000)
