"""inventory.http.request_body, on its own: the body read whole and bounded
(MAX_BODY_BYTES, chunked or not: werkzeug would stop a chunked body at its
limit silently, so the limit is set one byte over and that byte refused),
or by the lower bound its operation declares (`max_body`). Through HTTP: tests/api/test_limits.py,
tests/api/test_bodies.py."""
import io

import pytest
from werkzeug.exceptions import RequestEntityTooLarge

from app import create_app
from inventory.core.caps import MAX_SCAN_BODY_BYTES
from inventory.http.gate import Passage
from inventory.http.request_body import read_bounded_body
from tests.conftest import make_config

BOUND = 1000


@pytest.fixture
def small():
    """An app whose bodies are bounded at BOUND bytes."""
    return create_app(make_config(MAX_BODY_BYTES=BOUND))


def read(app, body, method="POST", path="/organizations", chunked=False):
    """What read_bounded_body does with `body` sent as `method` to `path`;
    returns the body as the request then holds it."""
    headers, overrides = {"Content-Type": "application/json"}, {}
    kwargs = {"data": body}
    if chunked:  # no Content-Length: the stream ends where the body does
        headers["Transfer-Encoding"] = "chunked"
        kwargs = {"input_stream": io.BytesIO(body)}
        overrides["wsgi.input_terminated"] = True
    with app.test_request_context(path, method=method, headers=headers,
                                  environ_overrides=overrides, **kwargs) as context:
        assert read_bounded_body(Passage(context.request)) is None
        return context.request.get_data()


def test_the_bound_is_one_byte_over_the_documented_one(small):
    assert small.config["MAX_CONTENT_LENGTH"] == BOUND + 1


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_at_the_bound_is_read_whole(small, chunked):
    assert read(small, b"x" * BOUND, chunked=chunked) == b"x" * BOUND


@pytest.mark.parametrize("chunked", [False, True])
def test_a_body_past_the_bound_is_a_413_chunked_or_not(small, chunked):
    with pytest.raises(RequestEntityTooLarge):
        read(small, b"x" * (BOUND + 1), chunked=chunked)
    with pytest.raises(RequestEntityTooLarge):
        read(small, b"x" * (BOUND * 3), chunked=chunked)


def test_a_get_with_a_body_is_bounded_too(small):
    with pytest.raises(RequestEntityTooLarge):
        read(small, b"x" * (BOUND + 1), method="GET")


def test_an_operations_own_lower_bound_is_a_413_past_it(app):
    scans = "/kubeclusters/c1/scans"
    assert len(read(app, b" " * MAX_SCAN_BODY_BYTES, path=scans)) == MAX_SCAN_BODY_BYTES
    with pytest.raises(RequestEntityTooLarge):
        read(app, b" " * (MAX_SCAN_BODY_BYTES + 1), path=scans)
    # another operation takes it: its bound is the service's
    assert len(read(app, b" " * (MAX_SCAN_BODY_BYTES + 1))) == MAX_SCAN_BODY_BYTES + 1
