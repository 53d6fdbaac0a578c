"""ETags and conditional requests (RFC 9110): If-Match, If-None-Match.

Only operations that declare them (`if_match`, `if_none_match` in
`inventory.http.operations`) honour the headers; the document lists them there.
"""
from flask import current_app, request

from inventory.http.errors import RequestError
from inventory.http.operations import current_operation

# The longest If-Match or If-None-Match read: about a hundred ETags. Longer
# is a 422 here rather than the server layer's 431 at 8 KiB.
MAX_ETAG_LIST = 2048


def _etag_list(header):
    """The header's value, refused when longer than MAX_ETAG_LIST."""
    value = request.headers.get(header, "")
    if len(value) > MAX_ETAG_LIST:
        raise RequestError(422, f"header.{header.lower()}",
                           f"At most {MAX_ETAG_LIST} characters.", value)
    return value


def etag(record):
    return f'"{record.revision}"'


def with_etag(record, status=200, headers=None):
    """A view's answer carrying the record's ETag."""
    return record, status, {"ETag": etag(record), **(headers or {})}


def if_match():
    """The revisions an If-Match allows, or None when any will do (absent or `*`).

    Weak tags never match for If-Match (strong comparison), so a header of
    only weak tags allows nothing and the write fails with 412.
    """
    declared = current_operation()
    if not declared.if_match or "If-Match" not in request.headers:
        return None
    _etag_list("If-Match")
    if request.if_match.star_tag:
        return None
    return list(request.if_match)  # the strong tags, unquoted


def not_modified(record):
    """A 304 if If-None-Match names the record's current ETag, else None."""
    if not current_operation().if_none_match or not _etag_list("If-None-Match"):
        return None
    tags = request.if_none_match
    if tags and (
            tags.star_tag or tags.contains_weak(record.revision)):
        response = current_app.response_class(status=304)
        response.headers["ETag"] = etag(record)
        return response
    return None


def read(record):
    """The answer to a conditional GET of `record`."""
    return not_modified(record) or with_etag(record)
