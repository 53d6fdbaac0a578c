"""The gunicorn worker the service runs under: gthread, with deadlines.

Why threads. The sync worker serves one connection at a time, so one client
that connects and sends nothing holds the whole process; after `timeout`
seconds gunicorn kills the worker, and the embedded store dies with it.
gunicorn's threaded worker (gthread) keeps its heartbeat in the main loop,
apart from the request threads, so a stuck request never gets the worker
killed, and idle connections wait in its poller without a thread.

What gthread alone does not bound: a client that sends its head slowly (a
header line every few seconds) or never finishes its body holds a thread for
as long as it likes. So every connection a thread works on has a deadline:
`HEADER_TIMEOUT` to send the request head, then `REQUEST_TIMEOUT` for the
rest (body, answer). A watchdog thread cuts a connection past its deadline,
answering 408 in the error format if the head never came. With `threads`
well above the number of such connections one client can hold for that
long, others are served as usual.

Answers the server layer itself gives (a request line or header too long,
malformed HTTP) are in the service's error format too (`handle_error`).

Logs. The service logs every request itself (inventory.observability), with
its request id and principal; gunicorn's access log is off (`Logger`).
"""
import socket
import threading
import time
import uuid
from http import HTTPStatus

import gunicorn.http.message
import orjson
from gunicorn import glogging, util
from gunicorn.http import errors as http_errors
from gunicorn.workers.gthread import ThreadWorker

from inventory.problems import problem_body

# The longest request line the API document allows: a 2,000-character filter
# percent-encoded (up to 12 bytes a character), a 2,048-character continue
# token and the path. gunicorn caps `limit_request_line` at 8,190 bytes in
# this module constant; the service raises the cap to what it documents.
REQUEST_LINE_LIMIT = 32768
gunicorn.http.message.MAX_REQUEST_LINE = REQUEST_LINE_LIMIT

HEADER_TIMEOUT = 10.0  # seconds to send the request line and headers
REQUEST_TIMEOUT = 30.0  # seconds for the body and the answer, once the head is in

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
    414: f"The request line is longer than {REQUEST_LINE_LIMIT} bytes.",
    431: "A request header field is too long, or there are too many of them.",
    501: "The request uses a transfer coding the server does not implement.",
}


def raw_problem(status, detail):
    """A complete HTTP/1.1 error answer in the service's format, for the
    server layer, where there is no Flask request (and maybe no host)."""
    request_id = str(uuid.uuid4())
    body = orjson.dumps(problem_body(status, detail, (), "/schemas/Error.json",
                                     f"urn:uuid:{request_id}"))
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
            "Connection: close\r\nContent-Type: application/problem+json\r\n"
            f"Content-Length: {len(body)}\r\nX-Request-ID: {request_id}\r\n\r\n")
    return head.encode("latin-1") + body


def status_of(exc):
    for kind, status in _STATUS_OF:
        if isinstance(exc, kind):
            return status
    return 500


class Worker(ThreadWorker):
    """gthread with a deadline on every connection a thread is working on."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._deadlines = {}  # connection -> [deadline, "head" or "request"]
        self._deadlines_lock = threading.Lock()

    def init_process(self):
        # after the fork, before gthread's own init (which runs the main loop)
        threading.Thread(target=self._watch, name="deadlines", daemon=True).start()
        super().init_process()

    def _set_deadline(self, conn, phase, seconds):
        with self._deadlines_lock:
            self._deadlines[conn] = [time.monotonic() + seconds, phase]

    def handle(self, conn):
        self._set_deadline(conn, "head", HEADER_TIMEOUT)
        try:
            return super().handle(conn)
        finally:
            with self._deadlines_lock:
                self._deadlines.pop(conn, None)

    def handle_request(self, req, conn):
        self._set_deadline(conn, "request", REQUEST_TIMEOUT)  # the head is in
        return super().handle_request(req, conn)

    def _watch(self):
        while True:
            time.sleep(0.25)
            now = time.monotonic()
            # Cut under the lock: a thread done with its connection waits for
            # it (in `handle`), so no connection is cut after it was handed
            # back to the poller. A cut is quick: its send never blocks.
            with self._deadlines_lock:
                expired = [(conn, phase) for conn, (deadline, phase) in self._deadlines.items()
                           if deadline <= now]
                for conn, phase in expired:
                    del self._deadlines[conn]
                    self._cut(conn, phase)

    def _cut(self, conn, phase):
        """End a connection past its deadline: its thread, blocked reading or
        writing, gets an end of stream or an error and is free again."""
        self.log.warning("closing a connection from %s: its %s took too long",
                         conn.client[0] if conn.client else "?", phase)
        try:
            if phase == "head":  # nothing was answered yet: say why
                conn.sock.setblocking(False)
                conn.sock.send(raw_problem(408, _DETAIL[408]))
        except OSError:
            pass
        try:
            conn.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def handle_error(self, req, client, addr, exc):
        """gunicorn's own error answers, in the service's error format."""
        status = status_of(exc)
        if status >= 500:
            self.log.exception("error handling a request: %s", exc)
        else:
            self.log.warning("invalid request from %s: %s", (addr or ("?",))[0], exc)
        try:
            util.write_nonblock(client, raw_problem(
                status, _DETAIL.get(status, HTTPStatus(status).description)))
        except Exception:  # the client may be gone; nothing more to do
            self.log.debug("could not send the error answer")


class Logger(glogging.Logger):
    """gunicorn's logger with no access log. With `logconfig_dict` set,
    gunicorn would build an access record for every request (a tenth of a
    small request's time) for a logger that has no handler."""

    access_log_enabled = False

    def access(self, resp, req, environ, request_time):
        pass
