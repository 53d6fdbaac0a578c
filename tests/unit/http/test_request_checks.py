"""inventory.http.request_checks, on its own: what no route should see is
refused before anything reads the request (a host the service does not
answer for, `//` in the path, a query string that is not UTF-8 once
percent-decoded), and ALLOWED_HOSTS set from the configuration. Through
HTTP: tests/api/test_hostile_input.py."""
import pytest
from werkzeug.exceptions import NotFound

from app import create_app
from inventory.http.errors import RequestError
from inventory.http.gate import Passage
from inventory.http.request_checks import refuse_unservable
from tests.conftest import make_config


def check(app, path="/organizations", **kwargs):
    with app.test_request_context(path, **kwargs) as context:
        return refuse_unservable(Passage(context.request))


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1:8080", "[::1]"])
def test_a_request_to_an_allowed_host_with_a_plain_path_and_utf8_query_passes(app, host):
    assert check(app, "/organizations?filter=title%3D%22caf%C3%A9%22",
                 base_url=f"http://{host}/") is None


def test_a_host_the_service_does_not_answer_for_is_a_400_at_header_host(app):
    with pytest.raises(RequestError) as refused:
        check(app, base_url="http://evil.example/")
    error = refused.value
    assert (error.status, error.location, error.value) == (400, "header.host", "evil.example")
    assert "ALLOWED_HOSTS" in error.message


def test_allowed_hosts_come_from_the_configuration():
    app = create_app(make_config(ALLOWED_HOSTS=["inventory.example"]))
    assert app.config["ALLOWED_HOSTS"] == ["inventory.example"]
    assert check(app, base_url="http://inventory.example/") is None
    with pytest.raises(RequestError):
        check(app, base_url="http://localhost/")


@pytest.mark.parametrize("path", ["//organizations", "/organizations//x", "/kubeclusters//"])
def test_a_double_slash_in_the_path_is_not_found_not_redirected(app, path):
    with pytest.raises(NotFound):
        check(app, environ_overrides={"PATH_INFO": path})


@pytest.mark.parametrize("query", ["a=%ff", "filter=%C3", "x=%ED%A0%80"])
def test_a_query_that_is_not_utf8_once_decoded_is_a_400_at_query(app, query):
    with pytest.raises(RequestError) as refused:
        check(app, environ_overrides={"QUERY_STRING": query})
    assert (refused.value.status, refused.value.location, refused.value.value) == (
        400, "query", query)


def test_the_refused_query_is_echoed_at_most_200_characters(app):
    query = "a=" + "x" * 500 + "%ff"
    with pytest.raises(RequestError) as refused:
        check(app, environ_overrides={"QUERY_STRING": query})
    assert refused.value.value == query[:200]
