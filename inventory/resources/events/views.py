"""/events: the change feed and audit history, read as pages, by waiting, or
as a stream of Server-Sent Events."""
import random
import threading
import time
from dataclasses import replace

import orjson
from flask import Response, request
from flask.views import MethodView

from inventory.core.caps import (
    LONG_LIVED_PER_ORGANIZATION,
    MAX_STREAMS,
    REQUEST_TIMEOUT,
    REVOCATION_CHECK_SECONDS,
    STREAM_KEEPALIVE_SECONDS,
    STREAM_SECONDS,
)
from inventory.core.errors import Busy, NotAuthenticated, Throttled
from inventory.http.auth import current_principal, current_scope, is_bootstrap_admin
from inventory.http.blueprint import Blueprint
from inventory.http.csv_export import JSON, RecordColumns, csv_response, wants_csv
from inventory.http.errors import RequestError
from inventory.http.lists import page_request
from inventory.http.operations import operation
from inventory.resources import event_types
from inventory.resources.events.spec import SPEC
from inventory.store import get_store
from schemas.events import EVENT_TYPES, EventListSchema, EventSchema, event_list_args

EVENT_STREAM = "text/event-stream"
STREAM_PAGE = 100  # events read at once while streaming
GAP_PAUSE = 0.05  # seconds between looks at a slot that is about to be filled

EVENT_TYPES[:] = event_types()  # handed to the schemas: the document's enum of `type`
EventListArgsSchema = event_list_args(SPEC.orderings)
_COLUMNS = RecordColumns(EventSchema(nested=True))

blp = Blueprint("events", __name__, path_keys=(SPEC.path_key,), url_prefix="/events",
                description="The change feed: every accepted change, oldest first.")


class _LongLived:
    """This process's long-lived requests: streams (MAX_STREAMS in all, past
    them a 503) and, with waits, LONG_LIVED_PER_ORGANIZATION of one
    organization's (past them a 429), however many tokens it has."""

    def __init__(self):
        self.open, self._of = 0, {}  # streams; {organization: streams and waits}
        self._lock = threading.Lock()

    def take(self, organization, stream):
        with self._lock:
            if stream and self.open >= MAX_STREAMS:
                raise Busy(f"This process serves {MAX_STREAMS} event streams already; "
                           "retry shortly.")
            held = self._of.get(organization, 0)
            if organization is not None and held >= LONG_LIVED_PER_ORGANIZATION:
                raise Throttled(f"This organization holds {LONG_LIVED_PER_ORGANIZATION} "
                                "streams and waits on this process already (its share, "
                                "whatever its tokens); close one or retry shortly.", 1)
            self._of[organization] = held + 1
            self.open += stream

    def give_back(self, organization, stream):
        with self._lock:
            self.open -= stream
            held = self._of.get(organization, 1) - 1
            if held:
                self._of[organization] = held
            else:
                self._of.pop(organization, None)


streams = _LongLived()


class _Revocation:
    """Whether the caller's token still authenticates: looked up at most every
    REVOCATION_CHECK_SECONDS (a revoke in this process is seen at once)."""

    def __init__(self, principal):
        self._key = principal.key
        self._always = is_bootstrap_admin(principal)
        self._checked = time.monotonic()
        # held here: a stream's body is read after its request's context is gone
        self._tokens = get_store().tokens
        # only with other processes (MongoDB) is there a revoke to look up:
        # this one's own wake its streams and waits at once
        self._shared = get_store().events.shared

    def slice(self, seconds):
        """How long to wait before looking again (never less than a moment)."""
        seconds = max(seconds, 0.01)
        return min(seconds, REVOCATION_CHECK_SECONDS) if self._shared and not self._always \
            else seconds

    def revoked(self):
        if self._always:
            return False
        if self._key in self._tokens.revoked_here:
            return True
        if not self._shared or time.monotonic() - self._checked < REVOCATION_CHECK_SECONDS:
            return False
        self._checked = time.monotonic()
        return not self._tokens.still_valid(self._key)


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
    end; its organization's share of long-lived requests held meanwhile, and
    a 401 as soon as its token is revoked (nothing committed after that is
    answered)."""
    principal = current_principal()
    streams.take(principal.organization, stream=False)
    try:
        _extend_answer(seconds)  # a wait past REQUEST_TIMEOUT still gets its answer
        revocation, deadline = _Revocation(principal), time.monotonic() + seconds
        while not page.records and (remaining := deadline - time.monotonic()) > 0:
            if page.next_after is not None:  # held by a slot about to be filled or closed
                time.sleep(min(GAP_PAUSE, remaining))
            elif not feed.wait(page.end, revocation.slice(remaining), asked.scope):
                if revocation.revoked():
                    raise NotAuthenticated("The token was revoked while it waited.")
                continue
            if revocation.revoked():
                raise NotAuthenticated("The token was revoked while it waited.")
            page = feed.page(replace(asked, after=page.next_after or page.end))
        return page
    finally:
        streams.give_back(principal.organization, stream=False)


def _extend_answer(seconds):
    """Let this answer take `seconds` more than the server's answer deadline
    (inventory.server.worker), where there is one (not under the test client)."""
    extend = request.environ.get("inventory.extend_answer")
    if extend is not None:
        extend(seconds + REQUEST_TIMEOUT)


def _stream(feed, asked):
    """The Server-Sent Events answer: events as they are committed, a comment
    when there are none for STREAM_KEEPALIVE_SECONDS, the end after
    STREAM_SECONDS. Each waits in its own greenlet, holding no thread."""
    principal = current_principal()
    streams.take(principal.organization, stream=True)
    _extend_answer(STREAM_SECONDS)
    return Response(_EventStream(feed, asked, principal), mimetype=EVENT_STREAM,
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


class _EventStream:
    """The stream's body; its slot is given back when the server closes it,
    whether or not it was ever read."""

    def __init__(self, feed, asked, principal):
        self._events = self._generate(feed, asked, _Revocation(principal))
        self._organization = principal.organization
        self._open = True

    def __iter__(self):
        return self._events

    def close(self):
        self._events.close()
        if self._open:
            self._open = False
            streams.give_back(self._organization, stream=True)

    @staticmethod
    def _generate(feed, asked, revocation):
        ends = time.monotonic() + STREAM_SECONDS
        # each stream's comments at its own moment within the interval, so
        # that hundreds opened together do not all wake at once
        keepalive = STREAM_KEEPALIVE_SECONDS * random.uniform(0.8, 1.0)
        yield b"retry: 1000\n\n"
        while (remaining := ends - time.monotonic()) > 0:
            if revocation.revoked():  # ends, with nothing committed after the revoke
                return
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
                # another process revoked); no second read to find nothing
                comment_at = time.monotonic() + keepalive
                while not feed.wait(page.end, revocation.slice(
                        min(comment_at - time.monotonic(), remaining)), asked.scope):
                    if revocation.revoked():
                        return
                    if time.monotonic() >= comment_at:
                        yield b": keep-alive\n\n"
                        comment_at = time.monotonic() + keepalive
                    if (remaining := ends - time.monotonic()) <= 0:
                        return
