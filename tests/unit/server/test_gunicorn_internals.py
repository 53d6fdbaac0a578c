"""The gunicorn and gevent internals the serving model relies on
(inventory.server.gunicorn_internals): where they were written for, a plain
message when an upgrade moves them, and what its changes to gunicorn do."""
from types import SimpleNamespace

import gunicorn.http.message
import pytest
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


def test_the_request_line_cap_is_the_services():
    assert gunicorn.http.message.MAX_REQUEST_LINE == REQUEST_LINE_BYTES


def _size_line(size):
    reader = ChunkedReader(SimpleNamespace(), IterUnreader([]))
    return reader.parse_chunk_size(IterUnreader([]), b"%x\r\nrest" % size)


def test_a_chunk_no_body_may_hold_is_refused_at_its_size_line():
    assert _size_line(MAX_BODY_BYTES) == (MAX_BODY_BYTES, b"rest")
    with pytest.raises(gunicorn_internals.ChunkTooLarge):
        _size_line(MAX_BODY_BYTES + 1)
