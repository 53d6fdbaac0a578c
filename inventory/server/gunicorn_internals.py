"""Every use the serving model (inventory.server.worker) makes of gunicorn's and
gevent's internals, in one place.

The design, and why: docs/design/serving.md"""
import inspect

import gunicorn.http.body
import gunicorn.http.message
import gunicorn.http.wsgi
from gevent.baseserver import BaseServer
from gevent.server import StreamServer
from gunicorn import glogging
from gunicorn.http import errors as http_errors
from gunicorn.workers.base_async import AsyncWorker
from gunicorn.workers.ggevent import GeventWorker

from inventory.core.caps import MAX_BODY_BYTES, REQUEST_LINE_BYTES
from inventory.core.pinned_versions import check_written_for

WRITTEN_FOR = {"gunicorn": "27.0.1", "gevent": "26.9.0"}
# (class, method, its parameters) inventory.server.worker overrides or calls
OVERRIDDEN = (
    (GeventWorker, "init_process", ("self",)),
    (GeventWorker, "load_wsgi", ("self",)),
    (GeventWorker, "timeout_ctx", ("self",)),
    (GeventWorker, "run", ("self",)),
    (GeventWorker, "handle", ("self", "listener", "client", "addr")),
    (AsyncWorker, "handle", ("self", "listener", "client", "addr")),
    (GeventWorker, "handle_request", ("self", "listener_name", "req", "sock", "addr")),
    (GeventWorker, "handle_error", ("self", "req", "client", "addr", "exc")),
    (StreamServer, "do_read", ("self",)),
    (glogging.Logger, "access", ("self", "resp", "req", "environ", "request_time")),
    (gunicorn.http.wsgi.FileWrapper, "__init__", ("self", "filelike", "blksize")),
    (gunicorn.http.wsgi.Response, "force_close", ("self",)),
    (gunicorn.http.body.ChunkedReader, "parse_chunk_size", ("self", "unreader", "data")),
)


class ChunkTooLarge(http_errors.ParseException):
    """A chunk announces more bytes than a whole body may have."""


gunicorn.http.message.MAX_REQUEST_LINE = REQUEST_LINE_BYTES

_parse_chunk_size = gunicorn.http.body.ChunkedReader.parse_chunk_size


def _bounded_parse_chunk_size(self, unreader, data=None):
    """gunicorn's chunk-size parser, refusing a chunk no body may hold at
    once, rather than waiting 30 s for 2**72 bytes that never come."""
    size, rest = _parse_chunk_size(self, unreader, data)
    if size > MAX_BODY_BYTES:
        raise ChunkTooLarge(f"a chunk of {size} bytes")
    return size, rest


gunicorn.http.body.ChunkedReader.parse_chunk_size = _bounded_parse_chunk_size


def expects_continue(req):
    """Whether the parsed request `req` asked for `100 Continue`."""
    return req._expected_100_continue


def take_continue(req):
    """Whether `req` asked for `100 Continue`; gunicorn will not send it."""
    pending, req._expected_100_continue = req._expected_100_continue, False
    return pending


def gunicorn_response(start_response):
    """gunicorn's `Response` whose `start_response` this is."""
    return start_response.__self__


def accept_again_after(server, seconds):
    """Stop `server` accepting, and start again after `seconds` (as gevent's
    BaseServer does after an accept error, without its traceback)."""
    server.stop_accepting()
    timer = server.loop.timer(seconds)
    timer.start(server._start_accepting_if_started)
    return timer


def check():
    """Raise AssertionError, saying what moved and what to do, if the
    installed gunicorn and gevent are not the ones this module was written for."""
    advice = check_written_for(
        "inventory/server/gunicorn_internals.py", WRITTEN_FOR,
        "re-read the named code in the new version, adapt that module (the only one that "
        "touches it) and inventory.server.worker's subclasses, update WRITTEN_FOR, and run "
        "scripts/test --all (tests/system/test_serving.py serves under gunicorn)")
    assert gunicorn.http.message.MAX_REQUEST_LINE == REQUEST_LINE_BYTES, \
        f"gunicorn.http.message.MAX_REQUEST_LINE is no longer the cap it was. {advice}."
    assert "MAX_REQUEST_LINE" in inspect.getsource(gunicorn.http.message.Request), \
        f"gunicorn's Request no longer reads MAX_REQUEST_LINE. {advice}."
    assert gunicorn.http.body.ChunkedReader.parse_chunk_size is _bounded_parse_chunk_size
    assert "_expected_100_continue" in inspect.getsource(gunicorn.http.wsgi), \
        f"gunicorn.http.wsgi no longer reads Request._expected_100_continue. {advice}."
    assert hasattr(gunicorn.http.message.Request, "_expected_100_continue"), \
        f"gunicorn's Request no longer has _expected_100_continue. {advice}."
    assert "start_response" in vars(gunicorn.http.wsgi.Response), \
        f"start_response is no longer a method of gunicorn's Response. {advice}."
    assert callable(getattr(BaseServer, "_start_accepting_if_started", None)), \
        f"gevent's BaseServer._start_accepting_if_started is gone. {advice}."
    for cls, name, parameters in OVERRIDDEN:
        method = getattr(cls, name, None)
        assert callable(method), f"{cls.__qualname__}.{name} is gone. {advice}."
        if method is _bounded_parse_chunk_size:
            method = _parse_chunk_size
        found = tuple(inspect.signature(method).parameters)
        assert found == parameters, \
            f"{cls.__qualname__}.{name} now takes {found}, not {parameters}. {advice}."
    assert hasattr(glogging.Logger, "access_log_enabled"), \
        f"gunicorn's Logger.access_log_enabled is gone. {advice}."
