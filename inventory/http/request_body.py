"""The request body: read whole, once the caller is known, and bounded by
MAX_BODY_BYTES (inventory.core.caps), chunked or not, or by the lower bound
its operation declares (`max_body`)."""
from werkzeug.exceptions import RequestEntityTooLarge

from inventory.http.operations import current_operation


def read_bounded_body(passage):
    """The gate's way in, once the caller is authenticated (so a request without
    a valid token is refused from its head, its body never read): read the
    whole body now, bounded. werkzeug stops reading a chunked body at the
    limit without saying so, and the truncated JSON would be a 400; the
    stream's limit is one byte over the documented one to tell them apart."""
    current = passage.request
    if current.method in ("GET", "HEAD", "OPTIONS") and not current.content_length \
            and "chunked" not in current.headers.get("Transfer-Encoding", "").lower():
        return  # nothing to read
    if len(current.get_data(cache=True)) > current.max_content_length - 1:
        raise RequestEntityTooLarge()
    declared = current_operation(current)
    if declared is not None and declared.max_body is not None \
            and len(current.get_data(cache=True)) > declared.max_body:
        raise RequestEntityTooLarge()  # its own, lower bound (a scan's)


def init_app(app, config):
    app.config["MAX_CONTENT_LENGTH"] = config.MAX_BODY_BYTES + 1  # see read_bounded_body
