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
    MAX_STREAMS,
    REQUEST_TIMEOUT,
    STREAM_KEEPALIVE_SECONDS,
    STREAM_SECONDS,
)
from inventory.core.errors import Busy
from inventory.http.auth import current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.errors import RequestError
from inventory.http.lists import page_request
from inventory.http.operations import operation
from inventory.resources.events.spec import SPEC
from inventory.store import get_store
from schemas.events import EventListArgsSchema, EventListSchema, EventSchema

EVENT_STREAM = "text/event-stream"
STREAM_PAGE = 100  # events read at once while streaming
GAP_PAUSE = 0.05  # seconds between looks at a slot that is about to be filled

blp = Blueprint("events", __name__, path_keys=(SPEC.path_key,), url_prefix="/events",
                description="The change feed: every accepted change, oldest first.")


class _Streams:
    """How many streams this process serves; past MAX_STREAMS, a 503."""

    def __init__(self):
        self.open = 0
        self._lock = threading.Lock()

    def take(self):
        with self._lock:
            if self.open >= MAX_STREAMS:
                raise Busy(f"This process serves {MAX_STREAMS} event streams already; "
                           "retry shortly.")
            self.open += 1

    def give_back(self):
        with self._lock:
            self.open -= 1


streams = _Streams()


@blp.route("")
class Events(MethodView):
    @blp.arguments(EventListArgsSchema, location="query")
    @blp.response(200, EventListSchema)
    @operation("listEvents", role="reader", errors=(410, 422), stream=EVENT_STREAM)
    def get(self, args):
        """List the change feed, wait for it, or stream it

        Oldest first. Resume from the last id seen with `after` (or, for a
        stream, `Last-Event-ID`): every later event comes exactly once. With
        `wait`, an answer with no newer event waits for one. With `Accept:
        text/event-stream`, Server-Sent Events: a comment at least every 15 s,
        the stream ending after 300 s (reconnect with `Last-Event-ID`); past
        the streams a process serves, 503. A scoped token sees its
        organization's events only."""
        feed = get_store().events
        if args.get("continue_") and args.get("after"):
            raise RequestError(422, "query.after", "Give `after` or `continue`, not both.",
                               args["after"])
        asked, pages = page_request("events", args)
        if args.get("after"):
            asked = replace(asked, after=feed.resolve(args["after"], "query.after"))
        if request.accept_mimetypes.best_match(["application/json", EVENT_STREAM]) \
                == EVENT_STREAM:
            last_seen = request.headers.get("Last-Event-ID")
            if last_seen:
                asked = replace(asked, after=feed.resolve(last_seen, "header.last-event-id"))
            return _stream(feed, replace(asked, limit=STREAM_PAGE))
        page = feed.page(asked)
        if args.get("wait") and not page.records:
            _extend_answer(args["wait"])  # a wait past REQUEST_TIMEOUT still gets its answer
            deadline = time.monotonic() + args["wait"]
            while not page.records and (remaining := deadline - time.monotonic()) > 0:
                if page.next_after is not None:  # held by a slot about to be filled or closed
                    time.sleep(min(GAP_PAUSE, remaining))
                elif not feed.wait(page.end, remaining):
                    break
                page = feed.page(replace(asked, after=page.next_after or page.end))
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
    streams.take()
    _extend_answer(STREAM_SECONDS)
    return Response(_EventStream(feed, asked), mimetype=EVENT_STREAM,
                    headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})


class _EventStream:
    """The stream's body; its slot is given back when the server closes it,
    whether or not it was ever read."""

    def __init__(self, feed, asked):
        self._events = self._generate(feed, asked)
        self._open = True

    def __iter__(self):
        return self._events

    def close(self):
        self._events.close()
        if self._open:
            self._open = False
            streams.give_back()

    @staticmethod
    def _generate(feed, asked):
        ends = time.monotonic() + STREAM_SECONDS
        # each stream's comments at its own moment within the interval, so
        # that hundreds opened together do not all wake at once
        keepalive = STREAM_KEEPALIVE_SECONDS * random.uniform(0.8, 1.0)
        yield b"retry: 1000\n\n"
        while (remaining := ends - time.monotonic()) > 0:
            page = feed.page(asked)
            for event in page.records:
                yield (f"id: {event['id']}\nevent: {event['type']}\ndata: ".encode()
                       + orjson.dumps(event) + b"\n\n")
            asked = replace(asked, after=page.next_after or page.end)
            if not page.records and page.next_after is not None:
                time.sleep(GAP_PAUSE)  # held by a slot about to be filled or closed
            elif not page.records:
                # nothing new: a comment each interval, and no read until a commit
                while not feed.wait(page.end, min(keepalive, remaining)):
                    yield b": keep-alive\n\n"
                    if (remaining := ends - time.monotonic()) <= 0:
                        return
