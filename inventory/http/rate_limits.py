"""Rate limits and concurrent requests, per caller.

Who a caller is: its token (by the token's id), or, for a request without a
valid token, its client address (the router's `X-Forwarded-For` hop behind
`TRUST_PROXY`, inventory.http.wsgi_middleware). Exempt: the bootstrap admin token
(`INVENTORY_ADMIN_TOKEN`, the operator's way back in), the routes that need
no token (health and readiness, which a platform's probes call and must
never see refused, the OpenAPI document, the docs page, the JSON Schemas:
none touches the data), and `OPTIONS` (CORS preflights, which do nothing).

The design, and why: docs/design/rate-limits.md"""
import logging
import math
import threading
import time
from functools import partial

from limits import parse_many
from limits.errors import StorageError
from limits.storage import storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter

from inventory.core.errors import Throttled
from inventory.http import auth
from inventory.http.rate_limits_internals import serialise_expiry

log = logging.getLogger(__name__)

RATE_HEADERS = ("RateLimit-Policy", "RateLimit")
CHECK_BACK_SECONDS = 30  # how often counting in memory looks whether MongoDB is back


def storage(config, database_name):
    """(storage URI, options) for `limits`: this process's memory on the
    embedded store; on MongoDB, the service's database with its timeouts."""
    if config.embedded:
        return "memory://", {}
    timeout = config.MONGODB_TIMEOUT_MS
    return config.MONGODB_URI, {
        "database_name": database_name, "counter_collection_name": "rate_limit_counters",
        "window_collection_name": "rate_limit_windows", "wrap_exceptions": True,
        "appname": "cluster-inventory-limits", "connect": False,
        "serverSelectionTimeoutMS": timeout, "connectTimeoutMS": timeout,
        "socketTimeoutMS": 2 * timeout}


class InFlight:
    """Requests in flight per caller key, at most `limit` each."""

    def __init__(self, limit):
        self.limit = limit
        self._counts = {}
        self._lock = threading.Lock()

    def acquire(self, key):
        with self._lock:
            held = self._counts.get(key, 0)
            if held >= self.limit:
                return False
            self._counts[key] = held + 1
            return True

    def release(self, key):
        with self._lock:
            held = self._counts.pop(key, 0) - 1
            if held > 0:
                self._counts[key] = held

    def held(self, key):
        return self._counts.get(key, 0)


class RateCounter:
    """Hits of callers' rate limits, counted in `storage` with `limits`'
    sliding-window counter; with `fallback`, in this process's memory while
    that storage fails, looking back every CHECK_BACK_SECONDS."""

    def __init__(self, uri, options, fallback):
        self.storage = storage_from_string(uri, **options)
        self.fallback = storage_from_string("memory://") if fallback else None
        for storage_ in (self.storage, self.fallback):
            serialise_expiry(storage_)
        self._counting = SlidingWindowCounterRateLimiter(self.storage)
        self._in_memory = self.fallback and SlidingWindowCounterRateLimiter(self.fallback)
        self._failed_at = None  # monotonic time the storage last failed

    def _strategy(self):
        if self._failed_at is not None and \
                time.monotonic() - self._failed_at >= CHECK_BACK_SECONDS:
            try:
                back = self.storage.check()
            except Exception:  # noqa: BLE001 (any failure: still away)
                back = False
            if back:
                log.warning("The rate limits' storage answers again: counting there.")
                self._failed_at = None
            else:
                self._failed_at = time.monotonic()
        return self._in_memory if self._failed_at is not None else self._counting

    def hit(self, items, key):
        """Count a request of `key` against each limit of `items`, the
        shortest window first (a request one refuses counts in no later
        one): (allowed, the limit that refused it or else the one with the
        fewest requests left, how many, seconds until its window frees some)."""
        strategy = self._strategy()
        try:
            refused = next((item for item in items if not strategy.hit(item, key)), None)
            left = [(strategy.get_window_stats(item, key), item) for item in items]
        except StorageError:
            if self.fallback is None or strategy is self._in_memory:
                raise
            log.warning("The rate limits' storage failed: counting in this process's "
                        "memory, looking back every %s s.", CHECK_BACK_SECONDS, exc_info=True)
            self._failed_at = time.monotonic()
            return self.hit(items, key)
        (reset_at, remaining), item = next(
            (entry for entry in left if entry[1] is refused), None) or min(
            left, key=lambda entry: entry[0][1])
        return refused is None, item, max(0, remaining), max(0, math.ceil(reset_at - time.time()))


class LocalRateCounter:
    """The same sliding-window counter as `limits`' (a previous window's
    count weighted by how much of it still overlaps, plus the current
    window's), kept in a dict of this process: on the embedded store there
    is one process, and counting a request costs a dictionary update, not
    the library's storage layers (60 us, a quarter of a single-record GET)."""

    SWEEP_EVERY = 4096  # hits between drops of counters whose windows are over

    def __init__(self):
        self._windows = {}  # (key, amount, seconds) -> [window number, previous, current]
        self._lock = threading.Lock()
        self._hits = 0

    def _window(self, key, item, now):
        """[number, previous count, current count] of `key`'s window of `item` at `now`."""
        seconds = item.get_expiry()
        number = int(now // seconds)
        entry = self._windows.get((key, item.amount, seconds))
        if entry is None:
            entry = self._windows[(key, item.amount, seconds)] = [number, 0, 0]
        elif entry[0] != number:
            entry[1] = entry[2] if entry[0] == number - 1 else 0
            entry[0], entry[2] = number, 0
        return entry, seconds, now - number * seconds

    def hit(self, items, key):
        """As RateCounter.hit: the shortest window first, a refused request
        counted in no later one."""
        now = time.time()
        with self._lock:
            self._hits += 1
            if self._hits % self.SWEEP_EVERY == 0:
                self._sweep(now)
            refused, stats = None, []
            for item in items:
                entry, seconds, elapsed = self._window(key, item, now)
                weighted = entry[1] * (seconds - elapsed) / seconds + entry[2]
                if refused is None:
                    if math.floor(weighted) + 1 <= item.amount:
                        entry[2] += 1
                        weighted += 1
                    else:
                        refused = item
                stats.append((item, self._stats(item, entry, seconds, elapsed, weighted)))
        item, (reset_in, remaining) = next(
            (entry for entry in stats if entry[0] is refused), None) or min(
            stats, key=lambda entry: entry[1][1])
        return refused is None, item, remaining, max(0, math.ceil(reset_in))

    @staticmethod
    def _stats(item, entry, seconds, elapsed, weighted):
        """(seconds until a request frees, requests left), as `limits` reckons them."""
        remaining = max(0, item.amount - math.floor(weighted))
        _, previous, current = entry
        if not (previous or current):
            return 0.0, remaining
        previous_reset = (seconds - elapsed) % (seconds / previous) if previous else math.inf
        current_reset = (2 * seconds - elapsed) % seconds if current else math.inf
        return min(previous_reset, current_reset), remaining

    def _sweep(self, now):
        for window_key in [window_key for window_key, (number, _, _) in self._windows.items()
                           if number < int(now // window_key[2]) - 1]:
            del self._windows[window_key]


class Limits:
    """The app's rate counter and in-flight counts, and the gate's layer that applies them."""

    def __init__(self, config, database_name):
        self.items = {}
        for policy, name in (("token", "RATE_LIMIT"), ("address", "RATE_LIMIT_ANONYMOUS"),
                             ("organization", "RATE_LIMIT_ORGANIZATION")):
            try:
                self.items[policy] = sorted(parse_many(getattr(config, name)),
                                            key=lambda item: item.get_expiry())
            except ValueError:
                raise ValueError(f"{name}={getattr(config, name)!r} is not a rate limit such as "
                                 "'1000 per minute' or '20/second'") from None
        if config.embedded:
            self.counter = LocalRateCounter()
        else:  # every worker and instance counts in the service's database
            uri, options = storage(config, database_name)
            self.counter = RateCounter(uri, options, fallback=True)
        self.in_flight = InFlight(config.CONCURRENT_REQUESTS) \
            if config.CONCURRENT_REQUESTS > 0 else None

    def enter(self, passage):
        """The gate's way in, ahead of authentication: the caller identified
        (its token looked up here, a database read that may answer 503, not
        while counting, which would take a failure for the rate storage's),
        its rate counted, then a slot in flight taken (a request over its
        rate takes none). Open routes and the bootstrap admin are exempt,
        and open routes never read the database for a token."""
        if passage.open:
            return
        principal = auth.caller(passage)
        if auth.is_bootstrap_admin(principal):
            return
        key = f"token:{principal.key}" if principal is not None \
            else f"address:{passage.request.remote_addr}"
        self._count(passage, principal, key)
        if self.in_flight is not None:
            if not self.in_flight.acquire(key):
                raise Throttled(f"Too many requests at once: at most {self.in_flight.limit} of "
                                "one caller's requests are answered at a time; wait for an "
                                "answer before sending more.", 1)
            passage.in_flight_key = key

    def count_sign_in(self, passage):
        """A console sign-in (inventory/ui): an open route, since its token
        comes in a form, not a header; each attempt counts as a request
        without a valid token does, by its client address."""
        self._count(passage, None, f"address:{passage.request.remote_addr}")

    def _count(self, passage, principal, key):
        policy = "token" if principal is not None else "address"
        allowed, item, remaining, reset = self.counter.hit(self.items[policy], key)
        passage.rate_window = policy, item, remaining, reset
        if not allowed:
            what = "this token" if policy == "token" else "requests without a valid token"
            raise Throttled(
                f"Too many requests: {what} reached its rate limit ({item.amount} per "
                f"{item.get_expiry()} seconds); retry after {max(1, reset)} seconds.",
                max(1, reset))
        organization = getattr(principal, "organization", None)
        if organization is not None:  # its organization's tokens, together
            allowed, item, left, reset = self.counter.hit(self.items["organization"],
                                                          f"organization:{organization}")
            if not allowed:
                passage.rate_window = "organization", item, left, reset
                raise Throttled(
                    f"Too many requests: this token's organization reached its rate limit "
                    f"({item.amount} per {item.get_expiry()} seconds, for all its tokens "
                    f"together); retry after {max(1, reset)} seconds.", max(1, reset))
            if left < remaining:  # the tighter of the two is the one to show
                passage.rate_window = "organization", item, left, reset

    def leave(self, passage, response):
        """The gate's way out: the rate headers; the slot held until the
        answer's last byte is sent."""
        window, passage.rate_window = passage.rate_window, None
        if window is not None:
            policy, item, remaining, reset = window
            response.headers["RateLimit-Policy"] = \
                f'"{policy}";q={item.amount};w={item.get_expiry()}'
            response.headers["RateLimit"] = f'"{policy}";r={remaining};t={reset}'
        key = passage.in_flight_key
        if key is not None:
            # Whichever answer is sent gives the slot back, once: when a later
            # way out fails, Flask drops this answer, makes a 500 and runs the
            # way out again, and the 500 carries the same release.
            release = passage.in_flight_release
            if release is None:
                release = passage.in_flight_release = _Once(partial(self.in_flight.release, key))
            response.call_on_close(release)
        return response

    def close(self, passage, _error):
        key, passage.in_flight_key = passage.in_flight_key, None
        if key is not None and passage.in_flight_release is None:
            self.in_flight.release(key)  # no answer took the slot: none will give it back


class _Once:
    """`action`, run on the first call only."""

    def __init__(self, action):
        self._action, self._lock = action, threading.Lock()

    def __call__(self):
        with self._lock:
            action, self._action = self._action, None
        if action is not None:
            action()


def get_limits(app):
    return app.extensions["inventory.rate_limits"]


def init_app(app, config, database_name):
    """The limits; the gate (inventory.http.gate) applies them, before
    authentication: requests are counted before they are checked."""
    limits = app.extensions["inventory.rate_limits"] = Limits(config, database_name)
    return limits
