"""One gate per request: the request's policy in one pass, in one written order.

Flask runs one `before_request`, one `after_request` and one
`teardown_request` of the gate. The gate reads the request, its operation's
declaration and whether its route is open once (a `Passage`), and hands that
to each layer in turn; the caller's token is resolved once, on first need
(`auth.caller`). Before: each layer's way in, in the order
`app.register_request_hooks` lists them; the first that answers (or
raises) ends the way in, and the view does not run. After: each layer's
way out, in the reverse order, for every answer, errors too.

The order is the contract (tests/unit/test_app.py reads it from here):

1. observability: a request id for everything after; the answer logged last.
2. request checks: a forged host, `//` or a query that is not UTF-8 is
   refused before anything reads the request; bodiless and secret answers'
   headers on the way out.
3. rate limits: the caller identified, its rate counted and a slot in flight
   taken, before it is authenticated (so 401s count too).
4. authentication: who calls, and may they.
5. the body: read whole and bounded, only for an authenticated caller.
6. idempotency: after authentication (keys belong to the caller); on the
   way out the answer is kept as the view made it.

CORS (flask-cors, when CORS_ORIGINS lists origins) is an extension's own
after-request hook, registered before the gate: it adds its headers once
the gate's way out is done, so no kept answer holds an origin's headers.
"""
from flask import g, request

from inventory.http.operations import current_operation


class Passage:
    """One request on its way through the gate: read once, shared by every
    layer, which keeps here what it learns of the request for its way out
    (not in `g`, a proxy to look through at each use)."""

    __slots__ = ("request", "operation", "open", "request_id", "started", "caller", "principal",
                 "session", "rate_window", "in_flight_key", "in_flight_release", "idempotency")

    NOT_LOOKED_UP = object()  # `caller` before the token is looked up

    def __init__(self, current):
        self.request = current
        self.operation = current_operation(current)  # None: no such route, or not an operation
        # OPTIONS (a preflight does nothing), or a route that needs no token
        self.open = current.method == "OPTIONS" or (current.url_rule is not None and (
            self.operation is None or self.operation.role is None))
        self.request_id = self.started = self.principal = None
        self.session = None  # a console session the caller came with (inventory.http.auth)
        self.caller = self.NOT_LOOKED_UP  # inventory.http.auth.caller
        self.rate_window = self.in_flight_key = self.in_flight_release = None
        self.idempotency = None


class Gate:
    """`layers`: (way in, way out) pairs, outermost first; either may be None.
    A way in takes the Passage and may return an answer; a way out takes the
    Passage and the answer and returns it (or another)."""

    def __init__(self, layers, closers=()):
        self.ways_in = [way_in for way_in, _ in layers if way_in is not None]
        self.ways_out = [way_out for _, way_out in reversed(layers) if way_out is not None]
        self.closers = list(closers)  # teardown: what a failed way out left held

    def enter(self):
        passage = g.passage = Passage(request._get_current_object())
        for way_in in self.ways_in:
            answer = way_in(passage)
            if answer is not None:
                return answer
        return None

    def leave(self, response):
        passage = g.get("passage")
        if passage is None:  # the request context failed before the gate's way in
            passage = g.passage = Passage(request._get_current_object())
        for way_out in self.ways_out:
            response = way_out(passage, response)
        return response

    def close(self, error):
        passage = g.get("passage")
        if passage is not None:  # else the gate took nothing a closer would give back
            for closer in self.closers:
                closer(passage, error)


def init_app(app, layers, closers=()):
    gate = Gate(layers, closers)
    app.before_request(gate.enter)
    app.after_request(gate.leave)
    app.teardown_request(gate.close)
    app.extensions["inventory.http.gate"] = gate
    return gate
