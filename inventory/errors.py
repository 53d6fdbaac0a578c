"""The service's exceptions and the one handler that turns every failure into
the interface's error body (RFC 9457 problem details, `application/problem+json`).

The store raises these exceptions; views may raise them too. flask-smorest's
own error payload never reaches a client: every HTTPException, every service
error and every unexpected exception goes through `problem_response`.
"""
import logging
from http import HTTPStatus

from flask import current_app, request
from werkzeug.exceptions import HTTPException, MethodNotAllowed

from inventory.observability import instance_uri, request_id
from inventory.problems import problem_body
from inventory.schema_urls import describe

log = logging.getLogger(__name__)

# webargs location names -> the wire's location prefixes
_LOCATIONS = {"json": "body", "query": "query", "querystring": "query",
              "view_args": "path", "path": "path", "headers": "header"}


class ServiceError(Exception):
    """Base of the service's own errors: a status, a detail and entries."""

    status = 500

    def __init__(self, detail, errors=None, headers=None):
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.headers = headers


class NotFound(ServiceError):
    status = 404


class Unauthorized(ServiceError):
    """No valid credentials: 401 with the challenge RFC 6750 asks for."""

    status = 401

    def __init__(self, detail, invalid_token=False):
        challenge = 'Bearer realm="inventory"'
        if invalid_token:
            challenge += ', error="invalid_token"'
        super().__init__(detail, headers={"WWW-Authenticate": challenge})


class Forbidden(ServiceError):
    status = 403


class Unavailable(ServiceError):
    """The database cannot be reached: 503, try again shortly."""

    status = 503

    def __init__(self):
        super().__init__("The database cannot be reached; try again shortly.",
                         headers={"Retry-After": "5"})


class PreconditionFailed(ServiceError):
    """The record changed since the client read it (If-Match): 412."""

    status = 412

    def __init__(self, detail, value=None):
        super().__init__(detail, [error_entry("header.if-match", detail, value)])


class InvalidRequest(ServiceError):
    """A request that is not well-formed where no parser of ours reads it (400)."""

    status = 400

    def __init__(self, location, message, value=None):
        super().__init__(message, [error_entry(location, message, value)])


class Duplicate(ServiceError):
    status = 409


class Conflict(ServiceError):
    status = 409


class Unprocessable(ServiceError):
    """A request that is well-formed but names something wrong (422)."""

    status = 422

    def __init__(self, location, message, value=None, detail=None):
        super().__init__(detail or message, [error_entry(location, message, value)])


def error_entry(location, message, value=None):
    return {"location": location, "message": message, "value": value}


def problem_response(status, detail, errors=(), headers=None):
    """The error body for `status`, with `$schema` and `Link` like any body."""
    body = problem_body(status, detail, errors, describe("Error"), instance_uri(request_id()))
    response = current_app.response_class(
        current_app.json.dumps(body), status=status, mimetype="application/problem+json"
    )
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


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
    from inventory.api.parser import parse_json_body  # the parser owns JSON rules

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
        headers["Allow"] = ", ".join(sorted(error.valid_methods or []))
        detail = f"The method {request.method} is not allowed on {request.path}."
    elif status == 400 and entries:
        detail = "The request body is not valid JSON: " + entries[0]["message"]
    else:
        detail = _detail_for(entries, error.description or HTTPStatus(status).description)
    if status >= 500:
        detail = HTTPStatus(status).description
        entries = []
    return problem_response(status, detail, entries, headers)


def handle_service_error(error):
    return problem_response(error.status, error.detail, error.errors, error.headers)


def handle_unexpected(error):
    """Anything uncaught: log it all, tell the client nothing of the code."""
    if isinstance(error, HTTPException):
        return handle_http_exception(error)
    log.exception("unhandled error on %s %s", request.method, request.path)
    return problem_response(500, "The server met an unexpected condition; "
                            "the request was not completed.")


def init_app(app):
    app.register_error_handler(HTTPException, handle_http_exception)
    app.register_error_handler(ServiceError, handle_service_error)
    app.register_error_handler(Exception, handle_unexpected)
