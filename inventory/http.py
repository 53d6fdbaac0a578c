"""Request plumbing: allowed hosts, the query string's encoding, the body's
size, trailing slashes, proxies, Link headers."""
from urllib.parse import unquote_to_bytes

from flask import request
from werkzeug.exceptions import NotFound, RequestEntityTooLarge
from werkzeug.middleware.proxy_fix import ProxyFix

from inventory.api.errors import RequestError
from inventory.operations import current_operation
from inventory.schema_urls import add_link_header, request_host_allowed


class IgnoreTrailingSlash:
    """Serve `/path/` exactly as `/path`, with no redirect (the contract)."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if len(path) > 1 and path.endswith("/"):
            environ["PATH_INFO"] = path.rstrip("/") or "/"
        return self.wsgi_app(environ, start_response)


def _check_request():
    """before_request, first of all: refuse what no route should see."""
    if not request_host_allowed():
        raise RequestError(400, "header.host", "This service does not answer for this host; "
                             "see ALLOWED_HOSTS.", request.host)
    if "//" in request.environ.get("PATH_INFO", ""):  # werkzeug would 308 to a merged path
        raise NotFound()
    raw_query = request.environ.get("QUERY_STRING", "")
    try:  # werkzeug would turn invalid UTF-8 into U+FFFD, silently
        unquote_to_bytes(raw_query.encode("latin-1")).decode("utf-8")
    except UnicodeError:
        raise RequestError(400, "query", "The query string is not UTF-8 once "
                             "percent-decoded.", raw_query[:200]) from None


def read_body():
    """before_request, once the caller is authenticated (so a request without
    a valid token is refused from its head, its body never read): read the
    whole body now, bounded. werkzeug stops reading a chunked body at the
    limit without saying so, and the truncated JSON would be a 400; the
    stream's limit is one byte over the documented one to tell them apart."""
    if len(request.get_data(cache=True)) > request.max_content_length - 1:
        raise RequestEntityTooLarge()


def _finish_response(response):
    if response.status_code == 204:
        response.headers.pop("Content-Type", None)  # no body, so no type
    declared = current_operation()
    if declared is not None and declared.secret:  # no cache may keep the answer
        response.headers["Cache-Control"] = "no-store"
    return add_link_header(response)


def init_app(app, config):
    app.config["MAX_CONTENT_LENGTH"] = config.MAX_BODY_BYTES + 1  # see _check_request
    app.config["ALLOWED_HOSTS"] = config.allowed_hosts
    wsgi_app = IgnoreTrailingSlash(app.wsgi_app)
    if config.TRUST_PROXY:
        # one proxy hop (the PaaS router) may set the scheme and host
        wsgi_app = ProxyFix(wsgi_app, x_for=1, x_proto=1, x_host=1, x_port=1)
    app.wsgi_app = wsgi_app
    app.before_request(_check_request)
    app.after_request(_finish_response)
