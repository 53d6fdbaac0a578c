"""The gunicorn and gevent internals the serving model relies on
(inventory/server/gunicorn_internals.py), pinned: each pinned reader
answers as gunicorn and gevent do at the pinned versions, and each change
it makes to gunicorn does what it says, or check() fails loudly (what
moved, what to do)."""
import time
from types import SimpleNamespace

import gunicorn.http.message
import gunicorn.http.wsgi
import pytest
from gunicorn.config import Config
from gunicorn.http.body import ChunkedReader
from gunicorn.http.unreader import IterUnreader

from inventory.core.caps import MAX_BODY_BYTES, REQUEST_LINE_BYTES
from inventory.server import gunicorn_internals


def test_the_internals_are_where_they_were_written_for():
    gunicorn_internals.check()


def test_an_upgrade_is_named_with_what_to_do(monkeypatch):
    monkeypatch.setattr(gunicorn_internals, "WRITTEN_FOR", {"gunicorn": "0.0.1"})
    with pytest.raises(AssertionError, match=r"gunicorn 27\.0\.1 is installed\. "
                                             r"inventory/server/gunicorn_internals\.py was "
                                             r"written for gunicorn==0\.0\.1: re-read"):
        gunicorn_internals.check()


def parsed(*headers):
    """gunicorn's own parse of a POST with `headers`."""
    head = b"".join(b"%s\r\n" % header for header in headers)
    data = b"POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n" + head + b"\r\n{}"
    return gunicorn.http.message.Request(Config(), IterUnreader([data]), ("127.0.0.1", 1))


class Socket:
    """A client's socket as gunicorn writes to it: what was sent."""

    def __init__(self):
        self.sent = b""

    def send(self, data):
        self.sent += data
        return len(data)

    def sendall(self, data):
        self.send(data)


def created(req):
    """gunicorn's (response, environ) for `req`, and what it sent meanwhile."""
    sock = Socket()
    response, environ = gunicorn.http.wsgi.create(req, sock, ("127.0.0.1", 1),
                                                  ("127.0.0.1", 8000), Config())
    return response, environ, sock.sent


def test_expects_continue_is_whether_gunicorn_would_send_100_continue():
    asked, plain = parsed(b"Expect: 100-continue"), parsed()
    assert gunicorn_internals.expects_continue(asked) is True
    assert gunicorn_internals.expects_continue(plain) is False
    assert created(asked)[2] == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert created(plain)[2] == b""


def test_take_continue_answers_once_and_gunicorn_sends_no_100_continue():
    req = parsed(b"Expect: 100-continue")
    assert gunicorn_internals.take_continue(req) is True
    assert gunicorn_internals.take_continue(req) is False
    assert gunicorn_internals.expects_continue(req) is False
    assert created(req)[2] == b""


def test_gunicorn_response_is_the_response_of_its_start_response():
    response, _, _ = created(parsed())
    assert gunicorn_internals.gunicorn_response(response.start_response) is response


def test_accept_again_after_stops_accepting_then_accepts_again():
    import gevent
    from gevent import socket
    from gevent.server import StreamServer

    accepted = []
    server = StreamServer(("127.0.0.1", 0), lambda client, address: accepted.append(address))
    server.start()
    client = None
    try:
        gunicorn_internals.accept_again_after(server, 1.0)
        client = socket.create_connection(("127.0.0.1", server.server_port))
        gevent.sleep(0.2)
        assert accepted == []  # the connection waits in the listen queue
        deadline = time.monotonic() + 20  # lenient: a loaded machine
        while not accepted and time.monotonic() < deadline:
            gevent.sleep(0.05)
        assert len(accepted) == 1
    finally:
        if client is not None:
            client.close()
        server.stop()


def test_the_request_line_cap_is_the_services():
    assert gunicorn.http.message.MAX_REQUEST_LINE == REQUEST_LINE_BYTES


def _size_line(size):
    reader = ChunkedReader(SimpleNamespace(), IterUnreader([]))
    return reader.parse_chunk_size(IterUnreader([]), b"%x\r\nrest" % size)


def test_a_chunk_no_body_may_hold_is_refused_at_its_size_line():
    assert _size_line(MAX_BODY_BYTES) == (MAX_BODY_BYTES, b"rest")
    with pytest.raises(gunicorn_internals.ChunkTooLarge):
        _size_line(MAX_BODY_BYTES + 1)
