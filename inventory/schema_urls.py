"""`$schema` URLs and the `Link: rel="describedBy"` header that repeats them."""
from flask import g, request


def schema_url(name):
    """Absolute URL of the JSON Schema called `name`, from this request's host."""
    return f"{request.host_url}schemas/{name}.json"


def describe(name):
    """The `$schema` URL of this response's body; remembered for its Link header."""
    url = schema_url(name)
    g.described_by = url
    return url


def add_link_header(response):
    url = g.get("described_by")
    if url:
        response.headers["Link"] = f'<{url}>; rel="describedBy"'
    return response
