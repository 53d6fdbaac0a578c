"""The URLs the service puts in answers (`$schema`, `Link`, `Location`), and
the hosts they may name.

A client chooses the `Host` header it sends. With `TRUST_PROXY` off, only
the configured `ALLOWED_HOSTS` may appear in a generated URL: any other host
is refused (400) before the request does anything, and its error body names
its schema by a relative URL, never by the forged host.
"""
import functools

from flask import current_app, request
from werkzeug.sansio.utils import get_current_url

from inventory.config import LOOPBACK_HOSTS  # noqa: F401 (the names a local run answers)
from schemas.common import BodySchema


def host_name(host):
    """`host` without its port, lower case: `[::1]:8000` -> `[::1]`."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[:host.find("]") + 1] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def host_allowed(host, allowed):
    """Whether `host` (with any port) is one of `allowed`: exact names, `*`
    for any, or `.example.com` for that domain and its subdomains."""
    name = host_name(host)
    for pattern in allowed:
        if pattern == "*" or name == pattern or (
                pattern.startswith(".") and (name.endswith(pattern) or name == pattern[1:])):
            return True
    return False


@functools.lru_cache(maxsize=256)  # bounded: the Host header is the client's choice
def _base_url(scheme, host, allowed):
    """`scheme://host/` (as werkzeug's `host_url` makes it) when `host` is
    allowed, else "/": the same few answers every request, so kept."""
    return get_current_url(scheme, host) if host_allowed(host, allowed) else "/"


def base_url():
    """`scheme://host/` of this request, or "/" when its host is not allowed
    (worked out once per request: the host check, `$schema` and `Link` all ask)."""
    current = request._get_current_object()
    try:
        return current.inventory_base_url
    except AttributeError:
        pass
    current.inventory_base_url = found = _base_url(
        current.scheme, current.host, tuple(current_app.config["ALLOWED_HOSTS"]))
    return found


def request_host_allowed():
    return base_url() != "/"


def schema_url(name):
    """URL of the JSON Schema called `name`, absolute when the host is allowed."""
    return f"{base_url()}schemas/{name}.json"


# Bodies' `$schema` URLs are made here; the schemas are handed the maker.
BodySchema.schema_urls = staticmethod(schema_url)


def describing_link(name):
    """The `Link` header value that names the JSON Schema `name` as the
    body's (RFC 8288 `describedBy`): the same URL as the body's `$schema`."""
    return f'<{schema_url(name)}>; rel="describedBy"'
