"""What no route should see, refused before anything reads the request: a
host this service does not answer for, `//` in the path, a query string that
is not UTF-8."""
from urllib.parse import unquote_to_bytes

from werkzeug.exceptions import NotFound

from inventory.http.errors import RequestError
from inventory.http.schema_urls import request_host_allowed


def refuse_unservable(passage):
    """The gate's way in, first after the request id."""
    current = passage.request
    if not request_host_allowed():
        raise RequestError(400, "header.host", "This service does not answer for this host; "
                             "see ALLOWED_HOSTS.", current.host)
    if "//" in current.environ.get("PATH_INFO", ""):  # werkzeug would 308 to a merged path
        raise NotFound()
    raw_query = current.environ.get("QUERY_STRING", "")
    try:  # werkzeug would turn invalid UTF-8 into U+FFFD, silently
        unquote_to_bytes(raw_query.encode("latin-1")).decode("utf-8")
    except UnicodeError:
        raise RequestError(400, "query", "The query string is not UTF-8 once "
                             "percent-decoded.", raw_query[:200]) from None


def init_app(app, config):
    app.config["ALLOWED_HOSTS"] = config.allowed_hosts
