"""The gunicorn worker the service runs under: gevent, with a deadline on
every read and write.

The design, and why: docs/design/serving.md"""
import contextlib
import errno
import resource
import socket
import time
import uuid
from functools import partial
from http import HTTPStatus
from urllib.parse import urlsplit

import gevent
import gunicorn.http.wsgi
import orjson
from gevent.server import StreamServer
from gunicorn import glogging
from gunicorn.http import errors as http_errors
from gunicorn.workers.base_async import AsyncWorker
from gunicorn.workers.ggevent import GeventWorker
from werkzeug import exceptions as http_exceptions

from inventory.core.caps import (
    DESCRIPTOR_RESERVE,
    HEADER_TIMEOUT,
    MAX_BODY_BYTES,
    REQUEST_LINE_BYTES,
    REQUEST_TIMEOUT,
)
from inventory.http.problems import problem_body
from inventory.server.gunicorn_internals import (
    ChunkTooLarge,
    accept_again_after,
    expects_continue,
    gunicorn_response,
    take_continue,
)

ANSWER_GRACE = 2.0  # seconds to send an error answer once a deadline has passed
# The kernel's buffer for one client's unread answer: a slow reader holds at
# most this much of the machine's memory, and a burst of them costs this much
# copying each rather than whole answers (about 2 ms at loopback's round trip
# for a 256 KiB window, far under what a remote client needs).
SEND_BUFFER_BYTES = 256 * 1024
LINGER_SECONDS = 2.0  # see _Connection.linger
FILE_BLOCK_BYTES = 64 * 1024  # see _FileWrapper
EMFILE_PAUSE_SECONDS = 0.1  # see _Listener
SUPPORTED_VERSIONS = ((1, 0), (1, 1))


# -- answers of the server layer

_STATUS_OF = (  # gunicorn's parse errors -> the status they answer
    (http_errors.LimitRequestLine, 414),
    (http_errors.LimitRequestHeaders, 431),
    (http_errors.UnsupportedTransferCoding, 501),
    (http_errors.ExpectationFailed, 417),
    (http_errors.InvalidResponseHeader, 500),
    (http_errors.InvalidResponseHeaderName, 500),
    (http_errors.ConfigurationProblem, 500),
    (http_errors.ParseException, 400),
)
_DETAIL = {
    400: "The request is not valid HTTP/1.1.",
    408: f"The request head did not arrive within {HEADER_TIMEOUT:g} seconds.",
    413: f"The request body is larger than {MAX_BODY_BYTES} bytes.",
    414: f"The request line is longer than {REQUEST_LINE_BYTES} bytes.",
    431: "A request header field is too long, or there are too many of them.",
    501: "The request uses a transfer coding the server does not implement; "
         "only chunked is.",
    503: "The server holds as many connections as it can; try again shortly.",
    505: "Only HTTP/1.0 and HTTP/1.1 are served.",
}


def raw_problem(status, detail=None, headers=()):
    """A complete HTTP/1.1 error answer in the service's format, for the
    server layer, where there is no Flask request (and maybe no host)."""
    request_id = str(uuid.uuid4())
    body = orjson.dumps(problem_body(
        status, detail or _DETAIL.get(status) or HTTPStatus(status).description, (),
        "/schemas/Error.json", f"urn:uuid:{request_id}"))
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            "Connection: close\r\nContent-Type: application/problem+json\r\n"
            f"Content-Length: {len(body)}\r\nX-Request-ID: {request_id}\r\n"
            + "".join(f"{name}: {value}\r\n" for name, value in headers) + "\r\n")
    return head.encode("latin-1") + body


def status_of(exc):
    if isinstance(exc, http_errors.InvalidHTTPVersion) and isinstance(exc.version, tuple):
        return 505  # well formed, but not a version this server speaks
    for kind, status in _STATUS_OF:
        if isinstance(exc, kind):
            return status
    return 500


# -- deadlines


class IdleConnection(Exception):
    """No request began within `keepalive` seconds: close quietly."""


class HeadTimeout(Exception):
    """A request head began but did not end within HEADER_TIMEOUT: 408."""


class BodyTimeout(Exception):
    """A request body did not arrive within REQUEST_TIMEOUT."""


class AnswerTimeout(BrokenPipeError):
    """The client did not read the answer within REQUEST_TIMEOUT: treated as
    gone (gunicorn closes a broken pipe quietly)."""

    def __init__(self):
        super().__init__(errno.EPIPE, "the client did not read the answer in time")


class _Connection:
    """A client socket whose every read and write ends at the deadline of
    the phase the connection is in (see the module's docstring)."""

    def __init__(self, sock, keepalive):
        self.sock = sock
        self.keepalive = keepalive
        self.continue_pending = False  # `Expect: 100-continue` not yet answered
        self.unread_body = False  # answered before its body was read
        self.streaming = False  # answering with a stream (see extend_answer)
        self.await_request()

    def await_request(self):
        now = time.monotonic()
        self._reading_head, self._received = True, False
        self._idle_until, self._until = now + self.keepalive, now + HEADER_TIMEOUT
        self._graced = False

    def start_request(self):
        self._reading_head = False
        self._until = time.monotonic() + REQUEST_TIMEOUT

    def extend_answer(self, seconds):
        """Let this answer run `seconds` from now: a stream, by design long
        (and ended, not waited for, when the worker shuts down)."""
        self._until = max(self._until, time.monotonic() + seconds)
        self.streaming = True

    def client_gone(self):
        """Whether the client has closed its side (or the connection broke):
        a look at the socket that neither waits nor takes what the client may
        have sent. A stream's client sends nothing while it reads, so what
        there is to read is its end; found within a look, where a write would
        find it only at the second write after the close. (A client that
        half-closes after its request would look gone: no browser, HTTP
        library or proxy we know of does that with a stream.)"""
        try:
            self.sock.settimeout(0)  # every read and write sets its own again
            return self.sock.recv(1, socket.MSG_PEEK) == b""
        except (BlockingIOError, InterruptedError, TimeoutError):
            return False  # nothing to read: still there
        except ValueError:
            return False  # a TLS socket takes no MSG_PEEK: the writes will tell
        except OSError:
            return True

    def recv(self, size):
        if self._reading_head:
            waiting = not self._received
            until = self._idle_until if waiting else self._until
            expired = IdleConnection if waiting else HeadTimeout
        else:
            until, expired = self._until, BodyTimeout
        data = self._within(until, expired, self.sock.recv, size)
        if data:
            self._received = True
        return data

    def sendall(self, data):
        until = self._until
        if self._reading_head or self._graced:  # an error answer of the server layer
            until = time.monotonic() + ANSWER_GRACE
        return self._within(until, AnswerTimeout, self.sock.sendall, data)

    def send(self, data):
        self.sendall(data)
        return len(data)

    def _within(self, until, expired, operation, *args):
        remaining = until - time.monotonic()
        if remaining <= 0:
            self._expire(expired)
        self.sock.settimeout(remaining)
        try:
            return operation(*args)
        except TimeoutError:
            self._expire(expired)

    def _expire(self, expired):
        if expired is BodyTimeout and not self._graced:
            # the app answers 408: give it a moment to send that
            self._graced = True
            self._until = time.monotonic() + ANSWER_GRACE
        raise expired()

    def close(self):
        if self.unread_body:
            self.linger()
        self.sock.close()

    def linger(self):
        """Close after an answer sent before the body was read: stop sending,
        then read and drop what the client still sends, for a moment (as
        nginx's lingering close does). Closing at once with unread data
        resets the connection, and the client may lose the answer."""
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_WR)
            ends = time.monotonic() + LINGER_SECONDS
            while (remaining := ends - time.monotonic()) > 0:
                self.sock.settimeout(remaining)
                if not self.sock.recv(65536):
                    break

    def __getattr__(self, name):
        return getattr(self.sock, name)


class _RequestBody:
    """`wsgi.input` as the app sees it: answers `Expect: 100-continue` at
    the first read (after the app has authenticated the request), and turns
    what can go wrong while reading into the HTTP errors the app answers."""

    def __init__(self, body, connection):
        self._body, self._connection = body, connection

    def read(self, size=None):
        return self._reading(self._body.read, size)

    def readline(self, size=None):
        return self._reading(self._body.readline, size)

    def readlines(self, size=None):
        return self._reading(self._body.readlines, size)

    def __iter__(self):
        return iter(self.readline, b"")

    def _reading(self, operation, size):
        connection = self._connection
        try:
            if connection.continue_pending:
                connection.continue_pending = False
                connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            return operation(size)
        except BodyTimeout:
            raise http_exceptions.RequestTimeout(
                f"The request body did not arrive within {REQUEST_TIMEOUT:g} seconds.") from None
        except ChunkTooLarge:
            raise http_exceptions.RequestEntityTooLarge(_DETAIL[413]) from None
        except http_errors.NoMoreData:
            raise http_exceptions.ClientDisconnected() from None
        except http_errors.ParseException as error:
            raise http_exceptions.BadRequest(
                f"The request body's chunked encoding is not valid HTTP/1.1: {error}") from None


def _has_body(environ):
    return environ.get("CONTENT_LENGTH", "0") not in ("", "0") \
        or "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()


class _FileWrapper(gunicorn.http.wsgi.FileWrapper):
    """Files (Swagger UI's) sent in 64 KiB writes rather than werkzeug's 8 KiB:
    a burst of slow readers costs an eighth of the writes."""

    def __init__(self, filelike, blksize=8192):
        super().__init__(filelike, max(blksize, FILE_BLOCK_BYTES))


class _ServerBoundary:
    """The app as the worker calls it: with the guarded body, and a
    connection closed after an error answer to a request with a body."""

    def __init__(self, app):
        self.app = app

    def __call__(self, environ, start_response):
        connection = environ["gunicorn.socket"]
        environ["inventory.extend_answer"] = connection.extend_answer
        environ["inventory.client_gone"] = connection.client_gone
        environ["wsgi.file_wrapper"] = _FileWrapper
        if not _has_body(environ):
            return self.app(environ, start_response)
        environ["wsgi.input"] = _RequestBody(environ["wsgi.input"], connection)
        response = gunicorn_response(start_response)

        def start(status, headers, exc_info=None):
            if int(status[:3]) >= 400:  # the body may be unread: no next request
                response.force_close()
                connection.unread_body = True
            return start_response(status, headers, exc_info)
        return self.app(environ, start)


def _refusal(req):
    """(status, detail) of a parsed head the server layer refuses itself,
    else None. Rewrites the `Host` of an absolute-form target."""
    if req.version not in SUPPORTED_VERSIONS:
        return 505, None
    for name, value in req.headers:
        if name == "TRANSFER-ENCODING" and any(
                coding.strip(" \t").lower() not in ("chunked", "")
                for coding in value.split(",")):
            return 501, None  # e.g. gzip, chunked: gzip is not implemented
        if name == "CONTENT-LENGTH" and expects_continue(req) \
                and value.isdigit() and int(value) > MAX_BODY_BYTES:
            return 413, None  # before inviting the body with 100 Continue
    if "://" in req.uri[:12]:
        # RFC 9112 section 3.2.2: the target's authority wins over `Host`
        authority = urlsplit(req.uri).netloc
        req.headers = [(name, value) for name, value in req.headers if name != "HOST"]
        req.headers.append(("HOST", authority))
    return None


# -- connections


def open_files_limit():
    """Raise the soft open-files limit to the hard one; the new soft limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


class _Listener(StreamServer):
    """gevent's server, counting connections as it accepts them: past the
    worker's cap, a connection gets a 503 and is closed at once. Out of
    descriptors all the same (EMFILE: files other than connections grew past
    the reserve), it pauses accepting for a moment, with a warning, and
    serves on; gevent's own handling would print a traceback each time and
    back off for up to a second."""

    def __init__(self, listener, worker):
        super().__init__(listener, handle=partial(worker.handle, listener))
        self._worker = worker
        self._warned = 0.0

    def do_read(self):
        worker = self._worker
        try:
            accepted = super().do_read()
        except OSError as error:
            if error.errno not in (errno.EMFILE, errno.ENFILE):
                raise
            self._pause()
            return None
        if accepted and worker.open_connections >= worker.max_connections:
            client = accepted[0]
            with contextlib.suppress(OSError):
                client.setblocking(0)
                client.send(raw_problem(503, headers=[("Retry-After", "1")]))
            client.close()
            return None
        if accepted:
            worker.open_connections += 1  # until its handler ends
        return accepted

    def _pause(self):
        if time.monotonic() - self._warned > 1:
            self._warned = time.monotonic()
            self._worker.log.warning("out of file descriptors: accepting again shortly")
        self._timer = accept_again_after(self, EMFILE_PAUSE_SECONDS)


class Worker(GeventWorker):
    """gunicorn's gevent worker with deadlines, a cap on connections and the
    server layer's answers in the service's error format."""

    def init_process(self):
        limit = open_files_limit()
        self.max_connections = max(1, min(self.worker_connections, limit - DESCRIPTOR_RESERVE))
        self.open_connections = 0
        self.connections = set()  # those being handled
        super().init_process()

    def load_wsgi(self):
        super().load_wsgi()
        self.wsgi = _ServerBoundary(self.wsgi)
        if self.max_connections < self.worker_connections:
            self.log.warning("serving at most %d connections: the open-files limit is %d",
                             self.max_connections, open_files_limit())

    def timeout_ctx(self):
        return contextlib.nullcontext()  # every read has its own deadline

    def run(self):
        servers = []
        for listener in self.sockets:
            listener.setblocking(1)
            server = _Listener(listener, self)
            if self.cfg.workers > 1:
                server.max_accept = 1
            server.start()
            servers.append(server)
        while self.alive:
            self.notify()
            gevent.sleep(1.0)
        for server in servers:  # stop accepting; finish what is under way
            server.close()
        ends = time.monotonic() + self.cfg.graceful_timeout
        while any(not connection.streaming for connection in self.connections) \
                and time.monotonic() < ends:
            self.notify()
            gevent.sleep(0.25)
        for server in servers:  # streams end here; their clients resume elsewhere
            server.stop(timeout=1)

    def handle(self, listener, client, addr):
        """One connection, counted from its accept (`_Listener`)."""
        connection = _Connection(client, self.cfg.keepalive)
        self.connections.add(connection)
        try:
            client.setblocking(1)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SEND_BUFFER_BYTES)
            AsyncWorker.handle(self, listener, connection, addr)  # closes it
        finally:
            self.open_connections -= 1
            self.connections.discard(connection)

    def handle_request(self, listener_name, req, sock, addr):
        sock.start_request()
        try:
            refused = _refusal(req)
            if refused:
                status, detail = refused
                sock.sendall(raw_problem(status, detail))
                raise StopIteration()
            sock.continue_pending = take_continue(req)
            return super().handle_request(listener_name, req, sock, addr)
        finally:
            sock.await_request()

    def handle_error(self, req, client, addr, exc):
        """gunicorn's own error answers, in the service's error format."""
        peer = (addr or ("?",))[0]
        if isinstance(exc, IdleConnection):
            return  # nothing was asked: nothing to answer
        if isinstance(exc, HeadTimeout):
            self.log.info("closing a connection from %s: its head took too long", peer)
            status = 408
        else:
            status = status_of(exc)
            if status >= 500 and status not in (501, 505):
                self.log.exception("error handling a request: %s", exc)
            else:
                self.log.info("invalid request from %s: %s", peer, exc)
        try:
            client.sendall(raw_problem(status))
        except Exception:  # the client may be gone; nothing more to do
            self.log.debug("could not send the error answer")


class Logger(glogging.Logger):
    """gunicorn's logger with no access log. With `logconfig_dict` set,
    gunicorn would build an access record for every request (a tenth of a
    small request's time) for a logger that has no handler."""

    access_log_enabled = False

    def access(self, resp, req, environ, request_time):
        pass
