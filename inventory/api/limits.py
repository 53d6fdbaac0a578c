"""Rate limits and concurrent requests, per caller.

Who a caller is: its token (by the token's id), or, for a request without a
valid token, its client address (the router's `X-Forwarded-For` hop behind
`TRUST_PROXY`, inventory.api.wsgi_middleware). Exempt: the bootstrap admin token
(`INVENTORY_ADMIN_TOKEN`, the operator's way back in), the routes that need
no token (health and readiness, which a platform's probes call and must
never see refused, the OpenAPI document, the docs page, the JSON Schemas:
none touches the data), and `OPTIONS` (CORS preflights, which do nothing).

Rate. Flask-Limiter over `limits`, one application-wide limit per caller
(`RATE_LIMIT` for tokens, `RATE_LIMIT_ANONYMOUS` for addresses), counted
with a sliding window (no double burst at a window's edge, and two numbers
per caller, not one per request). On the embedded store the counters live
in this process; on MongoDB in the service's own database (collections
`rate_limit_counters`, `rate_limit_windows`, expired by TTL), so a limit
holds across workers and instances. While MongoDB cannot be reached, each
process counts in memory (Flask-Limiter's fallback) and checks back.
Every limited answer carries `RateLimit-Policy` and `RateLimit` as
draft-ietf-httpapi-ratelimit-headers-10 writes them (one quota policy,
`"token"` or `"address"`: `q` requests per `w` seconds; `r` left, `t`
seconds until the window frees them); past the limit the answer is 429 with
`Retry-After`.

Concurrency. A token (or address) may have `CONCURRENT_REQUESTS` requests in
flight in one worker process; one more is a 429 (`Retry-After: 1`). It is
the caller's own doing, not the server's overload (503), and its remedy is
the caller's: wait for its answers. A request holds its slot until the last
byte of its answer is handed to the connection (the WSGI response's
`close`), so a slow reader of a large page keeps its slot, and one caller's
slow readers bound the memory they hold. Counted per process: the threads,
the memory and the store's lock it protects are the process's own.
"""
import logging
import math
import threading
import time
from functools import partial

from flask import g, request
from flask_limiter import Limiter, RateLimitExceeded
from limits import parse_many
from limits.errors import StorageError

from inventory import auth
from inventory.api.errors import handle_service_error
from inventory.api.limits_internals import serialise_expiry
from inventory.errors import Throttled
from inventory.operations import current_operation

log = logging.getLogger(__name__)

RATE_HEADERS = ("RateLimit-Policy", "RateLimit")


def _policy():
    """The quota policy this request is counted under: per token, or per address."""
    return "token" if auth.caller() is not None else "address"


def caller_key():
    principal = auth.caller()
    if principal is not None:
        return f"token:{principal.key}"
    return f"address:{request.remote_addr}"


def _open_route():
    """OPTIONS, or a route that needs no token (unmatched paths are not)."""
    if request.method == "OPTIONS":
        return True
    if request.url_rule is None:
        return False
    declared = current_operation()
    return declared is None or declared.role is None


def exempt():
    return _open_route() or auth.is_bootstrap_admin(auth.caller())


def _rate_limit(config):
    """The limit of this request's caller (asked before exemptions are)."""
    if _open_route() or auth.caller() is not None:
        return config.RATE_LIMIT
    return config.RATE_LIMIT_ANONYMOUS


def _identify():
    """before_request, ahead of the limiter: the caller's token is looked up
    here (a database read, which may answer 503), not inside the limiter,
    which would take a failure for its own storage's; open routes never
    read the database for it."""
    if not _open_route():
        auth.caller()


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


class Limits:
    """The app's limiter and in-flight counts, and the hooks that apply them."""

    def __init__(self, app, config, database_name):
        for name in ("RATE_LIMIT", "RATE_LIMIT_ANONYMOUS"):
            try:
                parse_many(getattr(config, name))
            except ValueError:
                raise ValueError(f"{name}={getattr(config, name)!r} is not a rate limit such as "
                                 "'1000 per minute' or '20/second'") from None
        uri, options = storage(config, database_name)
        app.before_request(_identify)
        self.limiter = Limiter(
            caller_key, app=app, storage_uri=uri, storage_options=options,
            strategy="sliding-window-counter",
            application_limits=[partial(_rate_limit, config)],
            application_limits_exempt_when=exempt,
            in_memory_fallback_enabled=not config.embedded, headers_enabled=False)
        serialise_expiry(self.limiter)
        self.in_flight = InFlight(config.CONCURRENT_REQUESTS) \
            if config.CONCURRENT_REQUESTS > 0 else None
        # after Flask-Limiter's own before_request: a request over its rate
        # takes no slot
        app.before_request(self._take_slot)
        app.after_request(self._finish)
        app.teardown_request(self._teardown)
        app.register_error_handler(RateLimitExceeded, self._rate_exceeded)

    def _window(self):
        """(limit item, requests left, seconds until the window frees some),
        or None when no limit applied or its storage cannot be read."""
        current = self.limiter.current_limit
        if current is None:
            return None
        try:
            reset_at, remaining = current.window
        except StorageError:
            return None
        return current.limit, max(0, remaining), max(0, math.ceil(reset_at - time.time()))

    def _rate_exceeded(self, _exceeded):
        window = self._window()
        item, retry_after = (window[0], window[2]) if window else (None, 1)
        what = "this token" if _policy() == "token" else "requests without a valid token"
        limit = f" ({item.amount} per {item.get_expiry()} seconds)" if item else ""
        return handle_service_error(Throttled(
            f"Too many requests: {what} reached its rate limit{limit}; retry after "
            f"{max(1, retry_after)} seconds.", retry_after))

    def _take_slot(self):
        if self.in_flight is None or exempt():
            return
        key = caller_key()
        if not self.in_flight.acquire(key):
            raise Throttled(f"Too many requests at once: at most {self.in_flight.limit} of "
                            "one caller's requests are answered at a time; wait for an "
                            "answer before sending more.", 1)
        g.in_flight_key = key

    def _finish(self, response):
        window = self._window()
        if window is not None:
            item, remaining, reset = window
            policy = _policy()
            response.headers["RateLimit-Policy"] = \
                f'"{policy}";q={item.amount};w={item.get_expiry()}'
            response.headers["RateLimit"] = f'"{policy}";r={remaining};t={reset}'
        key = g.pop("in_flight_key", None)
        if key is not None:  # held until the answer's last byte is sent
            response.call_on_close(partial(self.in_flight.release, key))
        return response

    def _teardown(self, _error):
        key = g.pop("in_flight_key", None)
        if key is not None:  # no answer was made (an after_request hook failed)
            self.in_flight.release(key)


def get_limits(app):
    return app.extensions["inventory.limits"]


def init_app(app, config, database_name):
    """Before authentication: requests are counted before they are checked."""
    app.extensions["inventory.limits"] = Limits(app, config, database_name)
