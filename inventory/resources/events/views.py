"""/events: the change feed and audit history, read as pages, by waiting, or
as a stream of Server-Sent Events."""
import random
import threading
import time
from dataclasses import replace

import orjson
from flask import Response, g, request
from flask.views import MethodView

from inventory.core.caps import (
    LONG_LIVED_PER_ORGANIZATION,
    MAX_STREAMS,
    PRESENCE_CHECK_SECONDS,
    REQUEST_TIMEOUT,
    REVOCATION_CHECK_SECONDS,
    STREAM_KEEPALIVE_SECONDS,
    STREAM_SECONDS,
)
from inventory.core.errors import Busy, NotAuthenticated, Unavailable
from inventory.http.auth import (
    SESSION_COOKIE,
    current_principal,
    current_scope,
    is_bootstrap_admin,
)
from inventory.http.blueprint import Blueprint
from inventory.http.csv_export import JSON, RecordColumns, csv_response, wants_csv
from inventory.http.errors import RequestError
from inventory.http.lists import page_request
from inventory.http.operations import operation
from inventory.http.rate_limits import not_in_flight
from inventory.resources import event_types
from inventory.resources.events.spec import SPEC
from inventory.store import get_store
from schemas.events import EVENT_TYPES, EventListSchema, EventSchema, event_list_args

EVENT_STREAM = "text/event-stream"
STREAM_PAGE = 100  # events read at once while streaming
GAP_PAUSE = 0.05  # seconds between looks at a slot that is about to be filled
# The last words of a stream that a newer one of its tenant displaced past
# the share: a comment, which EventSource ignores before it reconnects with
# Last-Event-ID.
ENDED_FOR_NEWER = (b": ended: a newer stream or wait of this tenant took its place; "
                   b"resume from the last id\n\n")
# The last words of a stream whose database went out of reach under it.
ENDED_UNAVAILABLE = (b": ended: the database cannot be reached; resume from the last id "
                     b"shortly\n\n")

EVENT_TYPES[:] = event_types()  # handed to the schemas: the document's enum of `type`
EventListArgsSchema = event_list_args(SPEC.orderings)
_COLUMNS = RecordColumns(EventSchema(nested=True))

blp = Blueprint("events", __name__, path_keys=(SPEC.path_key,), url_prefix="/events",
                description="The change feed: every accepted change, oldest first.")


class _Hold:
    """One long-lived request's place: whose (`token`), in which `share`
    (None: none, the bootstrap admin's), and whether a newer request of
    its tenant took it (`ended`)."""

    __slots__ = ("token", "stream", "share", "ended", "given_back")

    def __init__(self, token, stream, share):
        self.token, self.stream, self.share = token, stream, share
        self.ended = self.given_back = False


def _share_of(principal):
    """Whose share a long-lived request counts in: its organization's,
    whatever its token; an unscoped token's own; none for the bootstrap
    admin (exempt from every limit, the operator's way back in)."""
    if is_bootstrap_admin(principal):
        return None
    if principal.organization is not None:
        return f"organization:{principal.organization}"
    return f"token:{principal.key}"


class _LongLived:
    """This process's long-lived requests: streams (MAX_STREAMS in all, past
    them a 503) and, with waits, LONG_LIVED_PER_ORGANIZATION in one
    tenant's share. Past the share the newcomer is served and the oldest of
    its token's (else of its tenant's) ends: a stream closes (its client
    resumes with Last-Event-ID or `after`), a wait answers what it has."""

    def __init__(self):
        self.open, self._shares = 0, {}  # streams; {share: [holds, oldest first]}
        self._lock = threading.Lock()

    def take(self, principal, stream):
        hold = _Hold(principal.key, stream, _share_of(principal))
        with self._lock:
            if stream and self.open >= MAX_STREAMS:
                raise Busy(f"This process serves {MAX_STREAMS} event streams already; "
                           "retry shortly.")
            self.open += stream
            if hold.share is not None:
                held = self._shares.setdefault(hold.share, [])
                while len(held) >= LONG_LIVED_PER_ORGANIZATION:
                    oldest = next((h for h in held if h.token == hold.token), held[0])
                    held.remove(oldest)
                    oldest.ended = True  # seen within PRESENCE_CHECK_SECONDS
                held.append(hold)
        return hold

    def give_back(self, hold):
        with self._lock:
            if hold.given_back:
                return
            hold.given_back = True
            self.open -= hold.stream
            held = self._shares.get(hold.share)
            if held is not None and not hold.ended:
                held.remove(hold)
                if not held:
                    del self._shares[hold.share]

    def held(self, principal):
        """How many of `principal`'s share are held (for the tests and benches)."""
        with self._lock:
            return len(self._shares.get(_share_of(principal), ()))


streams = _LongLived()


class _Revocation:
    """Whether the caller's token still authenticates, and a console's
    session (the live list's stream) is not signed out: looked up at most
    every REVOCATION_CHECK_SECONDS (a revoke in this process is seen at once)."""

    def __init__(self, principal):
        self._key = principal.key
        self._always = is_bootstrap_admin(principal)
        self._checked = time.monotonic()
        # signed in by a console session: it ends with the session, whoever
        # signed in (the bootstrap admin too)
        self._session = request.cookies.get(SESSION_COOKIE) \
            if getattr(g.get("passage"), "session", None) else None
        self._sessions, self._session_checked = get_store().sessions, time.monotonic()
        # held here: a stream's body is read after its request's context is gone
        self._tokens = get_store().tokens
        # only with other processes (MongoDB) is there a revoke to look up:
        # this one's own wake its streams and waits at once
        self._shared = get_store().events.shared

    def slice(self, seconds):
        """How long to wait before looking again (never less than a moment)."""
        seconds = max(seconds, 0.01)
        looks = (self._shared and not self._always) or self._session is not None
        return min(seconds, REVOCATION_CHECK_SECONDS) if looks else seconds

    def revoked(self):
        if self._session_ended():
            return True
        if self._always:
            return False
        if self._key in self._tokens.revoked_here:
            return True
        if not self._shared or time.monotonic() - self._checked < REVOCATION_CHECK_SECONDS:
            return False
        self._checked = time.monotonic()
        return not self._tokens.still_valid(self._key)

    def _session_ended(self):
        if self._session is None or \
                time.monotonic() - self._session_checked < REVOCATION_CHECK_SECONDS:
            return False
        self._session_checked = time.monotonic()
        return not self._sessions.exists(self._session)


class _Watch:
    """What ends a long-lived request before its time: its token revoked
    (`revocation`), its client gone, or its place taken by a newer request
    of its tenant (`over`). Looked at every PRESENCE_CHECK_SECONDS at least
    (a revoke in this process wakes it at once)."""

    def __init__(self, principal, hold):
        self.revocation = _Revocation(principal)
        self._hold = hold
        # the server's look at the client's socket (inventory.server.worker);
        # none under the test client, where no socket is
        self._client_gone = request.environ.get("inventory.client_gone") or (lambda: False)

    def slice(self, seconds):
        return min(self.revocation.slice(seconds), PRESENCE_CHECK_SECONDS)

    def over(self):
        """None while it goes on; else the stream's last words (empty when
        its client is gone: no one to tell)."""
        if self._hold.ended:
            return ENDED_FOR_NEWER
        return b"" if self._client_gone() else None


@blp.route("")
class Events(MethodView):
    @blp.arguments(EventListArgsSchema, location="query")
    @blp.response(200, EventListSchema)
    # session: the console's live list streams it, signed in by its session
    @operation("listEvents", role="reader", errors=(410, 422), stream=EVENT_STREAM, csv=True,
               session=True)
    def get(self, args):
        """List the change feed, wait for it, or stream it

        Oldest first; `order_by=occurred_on desc` (or `id desc`) lists the
        newest first (pages to read, without `after`, `wait` or a stream).
        Resume from the last id seen with `after` (or, for a stream,
        `Last-Event-ID`): every later event comes exactly once. With
        `wait`, an answer with no newer event waits for one. With `Accept:
        text/event-stream`, Server-Sent Events: a comment at least every 15 s,
        the stream ending after 300 s (reconnect with `Last-Event-ID`); past
        the streams a process serves, 503. With `format=csv` (or `Accept:
        text/csv`), every event from `after` or `continue` on, as CSV (no
        `wait`). A scoped token sees its organization's events only."""
        feed = get_store().events
        if args.get("continue_") and args.get("after"):
            raise RequestError(422, "query.after", "Give `after` or `continue`, not both.",
                               args["after"])
        asked, pages = page_request("events", args, SPEC.orderings)
        as_csv = wants_csv(args, (JSON, EVENT_STREAM))
        if asked.backwards:  # newest first: a page to read, not a point to resume from
            for name in ("after", "wait"):
                if args.get(name):
                    raise RequestError(422, f"query.{name}", f"`{name}` reads the feed oldest "
                                       "first; it cannot be given with a `desc` order_by.",
                                       args[name])
            if as_csv:
                return csv_response(feed.page, asked, _COLUMNS, "events.csv", args.get("filter"))
            if request.accept_mimetypes.best_match([JSON, EVENT_STREAM]) == EVENT_STREAM:
                raise RequestError(422, "query.order_by", "A stream reads the feed oldest "
                                   "first; a `desc` order_by lists pages of it.",
                                   args["order_by"])
            return pages.envelope(feed.page(asked))
        if args.get("after"):
            asked = replace(asked, after=feed.resolve(args["after"], "query.after"))
        if as_csv:
            if args.get("wait"):
                raise RequestError(422, "query.wait", "A CSV answers the events there are; "
                                   "it cannot wait for more.", args["wait"])
            return csv_response(feed.page, asked, _COLUMNS, "events.csv", args.get("filter"))
        if request.accept_mimetypes.best_match(["application/json", EVENT_STREAM]) \
                == EVENT_STREAM:
            last_seen = request.headers.get("Last-Event-ID")
            if last_seen:
                asked = replace(asked, after=feed.resolve(last_seen, "header.last-event-id"))
            return _stream(feed, replace(asked, limit=STREAM_PAGE))
        page = feed.page(asked)
        if args.get("wait") and not page.records:
            page = _wait(feed, asked, page, args["wait"])
        return pages.envelope(page)


@blp.route("/<event>")
class Event(MethodView):
    @blp.response(200, EventSchema)
    @operation("getEvent", role="reader", errors=(404, 422))
    def get(self, event):
        """Read one event

        A scoped token reads its organization's events only (404 for
        others')."""
        return get_store().events.get(event, current_scope())


def _wait(feed, asked, page, seconds):
    """The first page with events within `seconds`, or the empty one at the
    end (or earlier, when its client went away or a newer request of its
    tenant took its place); its tenant's share of long-lived requests held
    meanwhile, no slot in flight, and a 401 as soon as its token is revoked
    (nothing committed after that is answered)."""
    principal = current_principal()
    hold = streams.take(principal, stream=False)
    not_in_flight()
    try:
        _extend_answer(seconds)  # a wait past REQUEST_TIMEOUT still gets its answer
        watch, deadline = _Watch(principal, hold), time.monotonic() + seconds
        revocation = watch.revocation
        while not page.records and (remaining := deadline - time.monotonic()) > 0:
            if page.next_after is not None:  # held by a slot about to be filled or closed
                time.sleep(min(GAP_PAUSE, remaining))
            elif not feed.wait(page.end, watch.slice(remaining), asked.scope):
                if revocation.revoked():
                    raise NotAuthenticated("The token was revoked while it waited.")
                if watch.over() is not None:
                    break
                continue
            if revocation.revoked():
                raise NotAuthenticated("The token was revoked while it waited.")
            page = feed.page(replace(asked, after=page.next_after or page.end))
        return page
    finally:
        streams.give_back(hold)


def _extend_answer(seconds):
    """Let this answer take `seconds` more than the server's answer deadline
    (inventory.server.worker), where there is one (not under the test client)."""
    extend = request.environ.get("inventory.extend_answer")
    if extend is not None:
        extend(seconds + REQUEST_TIMEOUT)


def _stream(feed, asked):
    """The Server-Sent Events answer: events as they are committed, a comment
    when there are none for STREAM_KEEPALIVE_SECONDS, the end after
    STREAM_SECONDS, when its client goes away, or when a newer request of
    its tenant takes its place. Each waits in its own greenlet, holding no
    thread and no slot in flight."""
    principal = current_principal()
    hold = streams.take(principal, stream=True)
    try:
        # the first page is read before the answer begins: a database out of
        # reach is then the 503 every request gets, not a 200 cut short
        first = feed.page(asked)
        body = _EventStream(feed, asked, first, _Watch(principal, hold), hold)
    except BaseException:
        streams.give_back(hold)  # no body will give it back
        raise
    not_in_flight()
    _extend_answer(STREAM_SECONDS)
    return Response(body, mimetype=EVENT_STREAM,
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


class _EventStream:
    """The stream's body; its place is given back when the server closes it,
    whether or not it was ever read."""

    def __init__(self, feed, asked, first, watch, hold):
        self._events = self._generate(feed, asked, first, watch)
        self._hold = hold

    def __iter__(self):
        return self._events

    def close(self):
        self._events.close()
        streams.give_back(self._hold)

    @staticmethod
    def _generate(feed, asked, first, watch):
        """The stream's lines; `first` is its first page, read already. A
        database that goes out of reach under it ends it with a comment (the
        client reconnects and is answered 503 until it is back), not with a
        broken connection and a traceback."""
        yield b"retry: 1000\n\n"
        try:
            yield from _EventStream._lines(feed, asked, first, watch)
        except Unavailable:
            yield ENDED_UNAVAILABLE

    @staticmethod
    def _lines(feed, asked, page, watch):
        ends = time.monotonic() + STREAM_SECONDS
        revocation = watch.revocation
        # each stream's comments at its own moment within the interval, so
        # that hundreds opened together do not all wake at once
        keepalive = STREAM_KEEPALIVE_SECONDS * random.uniform(0.8, 1.0)
        while (remaining := ends - time.monotonic()) > 0:
            if revocation.revoked():  # ends, with nothing committed after the revoke
                return
            if (last_words := watch.over()) is not None:
                if last_words:
                    yield last_words
                return
            if page is None:
                page = feed.page(asked)
            for event in page.records:
                yield (f"id: {event['id']}\nevent: {event['type']}\ndata: ".encode()
                       + orjson.dumps(event) + b"\n\n")
            asked = replace(asked, after=page.next_after or page.end)
            if page.next_after is not None:  # more to read now: a full page, or a gap
                if not page.records:
                    time.sleep(GAP_PAUSE)  # held by a slot about to be filled or closed
            else:
                # caught up to the page's end: a comment each interval, and no
                # read until a commit after it (or a revoke, or a look whether
                # another process revoked, the client went or a newer stream
                # took its place); no second read to find nothing
                comment_at = time.monotonic() + keepalive
                while not feed.wait(page.end, watch.slice(
                        min(comment_at - time.monotonic(), remaining)), asked.scope):
                    if revocation.revoked():
                        return
                    if (last_words := watch.over()) is not None:
                        if last_words:
                            yield last_words
                        return
                    if time.monotonic() >= comment_at:
                        yield b": keep-alive\n\n"
                        comment_at = time.monotonic() + keepalive
                    if (remaining := ends - time.monotonic()) <= 0:
                        return
            page = None  # read anew at the next turn
