"""The one place that turns every failure into the interface's error body
(RFC 9457 problem details, `application/problem+json`): the service's own
errors (`inventory.core.errors`), werkzeug's and webargs' HTTP errors, and
anything unexpected. flask-smorest's own error payload never reaches a client.
"""
import logging
from http import HTTPStatus

from flask import current_app, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from inventory.core import errors
from inventory.http import actions
from inventory.http.observability import instance_uri, request_id
from inventory.http.parser import parse_json_body
from inventory.http.problems import problem_body
from inventory.http.schema_urls import describing_link, schema_url

log = logging.getLogger(__name__)

# Each service error's status, found along its class's ancestry.
STATUS = {
    errors.NotFound: 404, errors.NotAuthenticated: 401, errors.NotAllowed: 403,
    errors.Unavailable: 503, errors.InvalidField: 422, errors.StaleRevision: 412,
    errors.HasChildren: 409, errors.KeyInUse: 409, errors.Contended: 409,
    errors.InProgress: 409, errors.NotNow: 409, errors.KeyReused: 422, errors.BadFilter: 422,
    errors.BadContinuation: 422, errors.BadOrdering: 422, errors.BadResumePoint: 422,
    errors.EventExpired: 410, errors.Busy: 503, errors.BadGrouping: 422,
    errors.Throttled: 429,
}

# webargs location names -> the wire's location prefixes
_LOCATIONS = {"json": "body", "query": "query", "querystring": "query",
              "view_args": "path", "path": "path", "headers": "header"}


class RequestError(errors.ServiceError):
    """What the HTTP layer itself refuses (a path key, a header, the host):
    it knows the status and where in the request the problem lies."""

    def __init__(self, status, location, message, value=None):
        super().__init__(message)
        self.status, self.location, self.message, self.value = status, location, message, value


def error_entry(location, message, value=None):
    return {"location": location, "message": message, "value": value}


def status_of(error):
    if isinstance(error, RequestError):
        return error.status
    return next(STATUS[kind] for kind in type(error).__mro__ if kind in STATUS)


def entries_of(error):
    """Where in the request each service error points."""
    if isinstance(error, RequestError):
        return [error_entry(error.location, error.message, error.value)]
    if isinstance(error, errors.InvalidField):
        where = f"body.{error.field}" if error.field else "body"
        return [error_entry(where, error.message, error.value)]
    if isinstance(error, errors.StaleRevision):
        return [error_entry("header.if-match", error.detail, request.headers.get("If-Match"))]
    if isinstance(error, errors.KeyReused):
        return [error_entry("header.idempotency-key", error.detail, error.key)]
    if isinstance(error, errors.BadFilter):
        return [error_entry("query.filter", error.message, error.fragment)]
    if isinstance(error, errors.BadContinuation):
        return [error_entry("query.continue", error.detail, error.token)]
    if isinstance(error, (errors.BadResumePoint, errors.EventExpired)):
        return [error_entry(error.location, error.detail, error.value)]
    if isinstance(error, errors.BadOrdering):
        return [error_entry("query.order_by", error.detail, error.text)]
    if isinstance(error, errors.BadGrouping):
        return [error_entry("query.group_by", error.detail, error.text)]
    return []


def headers_of(error):
    """The headers an answer to `error` carries (an API problem or a console page)."""
    if isinstance(error, errors.NotAuthenticated):
        challenge = 'Bearer realm="inventory"'
        if error.invalid_token:
            challenge += ', error="invalid_token"'
        return {"WWW-Authenticate": challenge}
    if isinstance(error, (errors.Unavailable, errors.Busy)):
        return {"Retry-After": "5"}
    if isinstance(error, errors.Throttled):
        return {"Retry-After": str(error.retry_after)}
    return {}


def problem_response(status, detail, entries=(), headers=None):
    """The error body for `status`, with `$schema` and `Link` like any body."""
    body = problem_body(status, detail, entries, schema_url("Error"), instance_uri(request_id()))
    response = current_app.response_class(
        current_app.json.dumps(body), status=status, mimetype="application/problem+json")
    response.headers["Link"] = describing_link("Error")
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def handle_service_error(error):
    if isinstance(error, errors.Unavailable):
        log.warning("database unavailable: %s", error.__cause__ or error)
    return problem_response(status_of(error), error.detail, entries_of(error),
                            headers_of(error))



def _walk(data, path):
    """The value at `path` inside parsed input, or None where it is absent."""
    for part in path:
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and isinstance(part, int) and 0 <= part < len(data):
            data = data[part]
        else:
            return None
    return data


def _flatten(messages, path=()):
    """Yield (path, message) for webargs/marshmallow nested error messages."""
    if isinstance(messages, dict):
        for key, inner in messages.items():
            # "_schema" is an error of the object itself, not of a field
            yield from _flatten(inner, path if key == "_schema" else path + (key,))
    elif isinstance(messages, (list, tuple)):
        for item in messages:
            yield from _flatten(item, path)
    else:
        yield path, str(messages)


def _raw_input(location):
    """What the client sent at a webargs location, for the `value` of entries."""
    if location == "json":
        try:
            return parse_json_body(request.get_data(cache=True))
        except ValueError:
            return None
    if location in ("query", "querystring"):
        return {k: (v[0] if len(v) == 1 else v) for k, v in request.args.lists()}
    if location in ("view_args", "path"):
        return request.view_args or {}
    if location == "headers":
        return {k.lower(): v for k, v in request.headers.items()}
    return None


def validation_entries(messages):
    """Error entries, one per problem, from webargs' `{location: messages}`."""
    entries = []
    for location, inner in messages.items():
        prefix = _LOCATIONS.get(location, location)
        raw = _raw_input(location)
        for path, message in _flatten(inner):
            if location == "headers":
                path = tuple(str(p).lower() for p in path)
            where = ".".join([prefix, *map(str, path)])
            entries.append(error_entry(where, message, _walk(raw, path)))
    return entries


def _detail_for(entries, fallback):
    if len(entries) == 1:
        return f"{entries[0]['location']}: {entries[0]['message']}"
    if entries:
        return f"{len(entries)} problems in the request; see errors."
    return fallback


def handle_http_exception(error):
    """Werkzeug/flask-smorest/webargs HTTP errors, in the service's format."""
    status = error.code or 500
    headers = {}
    data = getattr(error, "data", None) or {}
    entries = validation_entries(data["messages"]) if "messages" in data else []
    headers.update(data.get("headers") or {})
    if isinstance(error, MethodNotAllowed):
        allowed = actions.methods_of(request.path) or error.valid_methods or ()
        headers["Allow"] = ", ".join(sorted(allowed))
        detail = f"The method {request.method} is not allowed on {request.path}."
    elif status == 400 and entries:
        detail = "The request body is not valid JSON: " + entries[0]["message"]
    else:
        detail = _detail_for(entries, error.description or HTTPStatus(status).description)
    if status >= 500:
        detail = HTTPStatus(status).description
        entries = []
    return problem_response(status, detail, entries, headers)


def handle_unexpected(error):
    """Anything uncaught: log it all, tell the client nothing of the code."""
    if isinstance(error, HTTPException):
        return handle_http_exception(error)
    log.exception("unhandled error on %s %s", request.method, request.path)
    return problem_response(500, "The server met an unexpected condition; "
                            "the request was not completed.")


def init_app(app):
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(errors.ServiceError, handle_service_error)
    app.register_error_handler(Exception, handle_unexpected)
