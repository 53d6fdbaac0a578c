"""inventory.http.errors, on its own: each service error's status (found
along its class's ancestry), where in the request it points (`errors[]`'s
location and value), the headers its answer carries, webargs' nested
messages as one entry per problem with the value the client sent, the
detail of an HTTP error (one problem named, several counted, a 5xx telling
nothing), and an unexpected error logged whole but answered as a bare 500.
Through HTTP, every failure's body: tests/api/test_errors.py."""
import json
import logging
from http import HTTPStatus

import pytest
from flask import g
from werkzeug.exceptions import BadRequest, InternalServerError, MethodNotAllowed, NotFound

from inventory.core import errors
from inventory.http.errors import (
    STATUS,
    RequestError,
    entries_of,
    handle_http_exception,
    handle_service_error,
    handle_unexpected,
    headers_of,
    problem_response,
    status_of,
    validation_entries,
)


@pytest.fixture
def asking(app):
    """`asking(path, **kwargs)`: a request context of that request, popped at the end."""
    contexts = []

    def enter(path="/organizations", **kwargs):
        context = app.test_request_context(path, **kwargs)
        context.push()
        contexts.append(context)
    yield enter
    for context in reversed(contexts):
        context.pop()


def test_every_service_error_has_a_status_found_along_its_ancestry():
    assert status_of(errors.QuotaExceeded("clusters", 3, 3)) == 403  # a NotAllowed
    assert status_of(errors.InvalidReference("platform", "No such platform.")) == 422
    assert status_of(errors.Throttled("slow down", 3)) == 429
    assert status_of(RequestError(431, "header.x", "Too long.")) == 431
    undeclared = [kind for kind in _service_errors(errors.ServiceError)
                  if not any(ancestor in STATUS for ancestor in kind.__mro__)]
    assert undeclared == []


def _service_errors(base):
    for kind in base.__subclasses__():
        if kind is not RequestError:
            yield kind
        yield from _service_errors(kind)


def test_each_error_points_where_in_the_request_its_problem_lies(asking):
    asking(headers={"If-Match": '"r1"'})
    assert entries_of(errors.InvalidField("support.status", "Not one of them.", "x")) == [
        {"location": "body.support.status", "message": "Not one of them.", "value": "x"}]
    assert entries_of(errors.InvalidField(None, "Not a record.")) == [
        {"location": "body", "message": "Not a record.", "value": None}]
    assert entries_of(errors.StaleRevision("Changed meanwhile.")) == [
        {"location": "header.if-match", "message": "Changed meanwhile.", "value": '"r1"'}]
    assert entries_of(errors.KeyReused("Another request.", "k-1"))[0][
        "location"] == "header.idempotency-key"
    bad_filter = errors.BadFilter("Unknown field", "colour = 1")
    assert entries_of(bad_filter) == [{"location": "query.filter", "message": bad_filter.message,
                                       "value": "colour = 1"}]
    assert entries_of(errors.BadContinuation("Stale.", "tok"))[0]["location"] == "query.continue"
    assert entries_of(errors.BadOrdering("No.", "x asc"))[0]["location"] == "query.order_by"
    assert entries_of(errors.BadGrouping("No.", "x"))[0]["location"] == "query.group_by"
    assert entries_of(errors.BadResumePoint("Not an id.", "x", "header.last-event-id")) == [
        {"location": "header.last-event-id", "message": "Not an id.", "value": "x"}]
    assert entries_of(RequestError(400, "header.host", "Not here.", "evil")) == [
        {"location": "header.host", "message": "Not here.", "value": "evil"}]
    assert entries_of(errors.NotFound("No such record.")) == []


def test_an_answer_carries_the_headers_its_error_calls_for():
    assert headers_of(errors.NotAuthenticated("Who?")) == {
        "WWW-Authenticate": 'Bearer realm="inventory"'}
    assert headers_of(errors.NotAuthenticated("Unknown.", invalid_token=True)) == {
        "WWW-Authenticate": 'Bearer realm="inventory", error="invalid_token"'}
    assert headers_of(errors.Unavailable()) == {"Retry-After": "5"}
    assert headers_of(errors.Busy("Busy.")) == {"Retry-After": "5"}
    assert headers_of(errors.Throttled("Slow down.", 17)) == {"Retry-After": "17"}
    assert headers_of(errors.NotFound("No.")) == {}


def test_a_service_error_is_the_interfaces_error_body(asking):
    asking(headers={"X-Request-ID": "req-9"})
    response = handle_service_error(errors.Throttled("Slow down.", 4))
    assert response.status_code == 429 and response.mimetype == "application/problem+json"
    assert response.headers["Retry-After"] == "4"
    assert response.headers["Link"].endswith('/schemas/Error.json>; rel="describedBy"')
    body = json.loads(response.get_data())
    assert (body["status"], body["detail"], body["errors"]) == (429, "Slow down.", [])
    assert body["$schema"].endswith("/schemas/Error.json")


def test_the_problem_names_its_request_by_its_id(app):
    with app.test_request_context("/"):
        g.request_id = "0b7e3d1c-8a5f-4c2e-9d41-6f0a2b3c4d5e"
        body = json.loads(problem_response(404, "No.").get_data())
        assert body["instance"] == "urn:uuid:0b7e3d1c-8a5f-4c2e-9d41-6f0a2b3c4d5e"
        g.request_id = "lb-1234"
        assert json.loads(problem_response(404, "No.").get_data())["instance"] == \
            "urn:x-request-id:lb-1234"


def test_webargs_messages_are_one_entry_per_problem_with_the_value_sent(asking):
    asking("/organizations?limit=many&order_by=a&order_by=b", method="POST",
           json={"support": {"status": "x", "until": "y"}, "tags": ["ok", 3]},
           headers={"X-Thing": "v"})
    entries = validation_entries({
        "json": {"support": {"status": ["Not one of them."], "_schema": ["Whole wrong."]},
                 "tags": {1: ["Not a string."]}},
        "query": {"limit": ["Not a number."], "order_by": ["One only."]},
        "headers": {"X-Thing": ["Bad."]},
        "view_args": {"cluster": ["Bad key."]}})
    assert entries == [
        {"location": "body.support.status", "message": "Not one of them.", "value": "x"},
        {"location": "body.support", "message": "Whole wrong.",  # `_schema`: the object's own
         "value": {"status": "x", "until": "y"}},
        {"location": "body.tags.1", "message": "Not a string.", "value": 3},
        {"location": "query.limit", "message": "Not a number.", "value": "many"},
        {"location": "query.order_by", "message": "One only.", "value": ["a", "b"]},
        {"location": "header.x-thing", "message": "Bad.", "value": "v"},
        {"location": "path.cluster", "message": "Bad key.", "value": None}]


def test_a_body_that_is_not_json_has_no_value_to_echo(asking):
    asking(method="POST", data=b"{not json", content_type="application/json")
    assert validation_entries({"json": {"title": ["Missing."]}}) == [
        {"location": "body.title", "message": "Missing.", "value": None}]


def unprocessable(messages):
    error = BadRequest()
    error.code, error.data = 422, {"messages": messages}
    return error


def test_an_http_errors_detail_names_its_one_problem_or_counts_them(asking):
    asking("/organizations?limit=x&filter=y")
    one = json.loads(handle_http_exception(unprocessable(
        {"query": {"limit": ["Not a number."]}})).get_data())
    assert one["status"] == 422 and one["detail"] == "query.limit: Not a number."
    two = json.loads(handle_http_exception(unprocessable(
        {"query": {"limit": ["Not a number."], "filter": ["Bad."]}})).get_data())
    assert two["detail"] == "2 problems in the request; see errors." and len(two["errors"]) == 2
    plain = json.loads(handle_http_exception(NotFound()).get_data())
    assert plain["detail"] == NotFound.description and plain["errors"] == []


def test_a_bad_json_body_is_a_400_saying_so(asking):
    asking(method="POST", data=b"{", content_type="application/json")
    error = BadRequest()
    error.data = {"messages": {"json": {"_schema": ["Expecting value at 1:2."]}}}
    body = json.loads(handle_http_exception(error).get_data())
    assert body["detail"] == "The request body is not valid JSON: Expecting value at 1:2."


def test_a_method_not_allowed_names_the_allowed_ones(asking):
    asking("/organizations", method="PUT")
    response = handle_http_exception(MethodNotAllowed(valid_methods=["POST", "GET"]))
    assert response.status_code == 405
    assert response.headers["Allow"] == "GET, POST"  # sorted, as the route declares them
    assert json.loads(response.get_data())["detail"] == \
        "The method PUT is not allowed on /organizations."


def test_a_5xx_tells_nothing_of_what_went_wrong(asking):
    asking()
    error = InternalServerError("secret stack detail")
    error.data = {"messages": {"query": {"limit": ["internal"]}}}
    body = json.loads(handle_http_exception(error).get_data())
    assert body["detail"] == HTTPStatus(500).description and body["errors"] == []


def test_an_unexpected_error_is_logged_whole_and_answered_as_a_bare_500(asking, caplog):
    asking("/organizations")
    try:
        raise KeyError("db-password=hunter2")
    except KeyError as error:
        with caplog.at_level(logging.ERROR, logger="inventory.http.errors"):
            response = handle_unexpected(error)
    assert response.status_code == 500
    assert "hunter2" not in response.get_data(as_text=True)
    assert json.loads(response.get_data())["detail"].startswith("The server met an unexpected")
    assert any(record.exc_info for record in caplog.records) and "hunter2" in caplog.text
    assert "GET /organizations" in caplog.text


def test_an_http_error_reaching_the_last_handler_keeps_its_own_status(asking):
    asking()
    assert handle_unexpected(NotFound()).status_code == 404
