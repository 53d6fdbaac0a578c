"""Rate limits and concurrent requests, per caller.

Who a caller is: its token (by the token's id), or, for a request without a
valid token, its client address (the router's `X-Forwarded-For` hop behind
`TRUST_PROXY`, inventory.http.wsgi_middleware). Exempt: the bootstrap admin token
(`INVENTORY_ADMIN_TOKEN`, the operator's way back in), the routes that need
no token (health and readiness, which a platform's probes call and must
never see refused, the OpenAPI document, the docs page, the JSON Schemas:
none touches the data), and `OPTIONS` (CORS preflights, which do nothing).

The design, and why: docs/design/rate-limits.md"""
import threading
from functools import partial

from flask import current_app, g
from limits import parse_many

from inventory.core.errors import Throttled
from inventory.http import auth

RATE_HEADERS = ("RateLimit-Policy", "RateLimit")


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
    """The app's rate counter and in-flight counts, and the gate's layer that applies them."""

    def __init__(self, config, counter):
        self.items, self.windows = {}, {}
        for policy, name in (("token", "RATE_LIMIT"), ("address", "RATE_LIMIT_ANONYMOUS"),
                             ("organization", "RATE_LIMIT_ORGANIZATION")):
            try:
                self.items[policy] = sorted(parse_many(getattr(config, name)),
                                            key=lambda item: item.get_expiry())
            except ValueError:
                raise ValueError(f"{name}={getattr(config, name)!r} is not a rate limit such as "
                                 "'1000 per minute' or '20/second'") from None
            self.windows[policy] = tuple((item.amount, item.get_expiry())
                                         for item in self.items[policy])
        # the store's (inventory.store.rate_counters): in this process's memory on
        # the embedded store, in the database shared by every worker and instance else
        self.counter = counter
        self.in_flight = InFlight(config.CONCURRENT_REQUESTS) \
            if config.CONCURRENT_REQUESTS > 0 else None

    def enter(self, passage):
        """The gate's way in, ahead of authentication: the caller identified
        (its token looked up here, a database read that may answer 503, not
        while counting, which would take a failure for the rate counter's),
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
        allowed, item, remaining, reset = self._hit(policy, key)
        passage.rate_window = policy, item, remaining, reset
        if not allowed:
            what = "this token" if policy == "token" else "requests without a valid token"
            raise Throttled(
                f"Too many requests: {what} reached its rate limit ({item.amount} per "
                f"{item.get_expiry()} seconds); retry after {max(1, reset)} seconds.",
                max(1, reset))
        organization = getattr(principal, "organization", None)
        if organization is not None:  # its organization's tokens, together
            allowed, item, left, reset = self._hit("organization", f"organization:{organization}")
            if not allowed:
                passage.rate_window = "organization", item, left, reset
                raise Throttled(
                    f"Too many requests: this token's organization reached its rate limit "
                    f"({item.amount} per {item.get_expiry()} seconds, for all its tokens "
                    f"together); retry after {max(1, reset)} seconds.", max(1, reset))
            if left < remaining:  # the tighter of the two is the one to show
                passage.rate_window = "organization", item, left, reset

    def _hit(self, policy, key):
        """Count a request of `key` against `policy`'s limits, the shortest
        window first: (allowed, the limit that refused it or else the one
        with the fewest requests left, how many, seconds until its window
        frees some)."""
        allowed, index, remaining, reset = self.counter.hit(self.windows[policy], key)
        return allowed, self.items[policy][index], remaining, reset

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

    def long_lived(self, passage):
        """This request is a stream or a wait (the feed's): it gives back its
        slot in flight now. Long-lived requests are counted in their tenant's
        share of them (inventory.resources.events), never in the requests in
        flight, which a person's console tabs would hold up otherwise."""
        key, passage.in_flight_key = passage.in_flight_key, None
        if key is not None and passage.in_flight_release is None:
            self.in_flight.release(key)

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


def not_in_flight():
    """The current request is long-lived: its slot in flight given back
    (Limits.long_lived)."""
    passage = g.get("passage")
    if passage is not None:
        get_limits(current_app).long_lived(passage)


def get_limits(app):
    return app.extensions["inventory.rate_limits"]


def init_app(app, config, store):
    """The limits, counted by `store`'s rate counter; the gate
    (inventory.http.gate) applies them, before authentication: requests are
    counted before they are checked."""
    limits = app.extensions["inventory.rate_limits"] = Limits(config, store.rate_counter)
    return limits
