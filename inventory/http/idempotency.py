"""`Idempotency-Key` on creates: a retried POST answers what the first did.

Operations that take a key say so (`idempotency_key=True` in their
declaration, `inventory.http.operations`); a key sent to any other POST is a 422
rather than silently ignored. The key is scoped to the caller's token; the
same key with the same request (path and JSON body) within 24 hours replays
the first successful answer with `Idempotent-Replayed: true`; with another
request it is a 422. Failed requests are not kept, so a retry after an error
runs again.
"""
import hashlib
import json
import re

import orjson
from flask import current_app, request

from inventory.http.auth import current_principal
from inventory.http.errors import RequestError
from inventory.store import get_store

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
_KEY_RE = re.compile(rf"^[\x21-\x7e]{{1,{MAX_KEY_LENGTH}}}$")  # visible ASCII
_REPLAYED_HEADERS = ("Location", "ETag", "Content-Type", "Link")
_REBASED_HEADERS = ("Location", "Link")  # of those, the ones that hold the service's URLs


def _fingerprint():
    body = request.get_data(cache=True)
    try:  # the same JSON, however it is spaced, is the same request
        body = json.dumps(_parsed(body or b"{}"), sort_keys=True, separators=(",", ":")).encode()
    except ValueError:
        pass  # the request will fail on its body; the raw bytes will do
    return hashlib.sha256(request.path.encode() + b"\n" + body).hexdigest()


_LONG_NUMBER = re.compile(rb"[0-9]{19}")  # may be past 64 bits: orjson makes it a float


def _parsed(body):
    """The body's value as json.loads gives it (the fingerprint is written
    by json.dumps, as keys stored before were), parsed by orjson where it
    can: the same value, three times faster; json.loads for what orjson
    refuses (NaN) or reads otherwise (an integer past 64 bits)."""
    if _LONG_NUMBER.search(body) is None:
        try:
            return orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
    return json.loads(body)


def reserve_or_replay(passage):
    """The gate's way in (after authentication): replay, or own the key."""
    if passage.request.method != "POST":
        return None
    key = passage.request.headers.get(HEADER)
    declared = passage.operation
    if key is None or declared is None:
        return None
    if not declared.idempotency_key:
        reason = (" (its answer holds a secret, which is never stored)"
                  if declared.secret else "")
        raise RequestError(422, "header.idempotency-key", "This operation does not take an "
                            f"Idempotency-Key{reason}.", key)
    if not _KEY_RE.match(key):
        raise RequestError(422, "header.idempotency-key", f"Must be 1 to {MAX_KEY_LENGTH} visible ASCII "
                            "characters (a UUID is a good choice).", key)
    scoped_key = f"{current_principal().key}:{key}"
    owner, answer = get_store().idempotency.reserve(scoped_key, _fingerprint())
    if answer is None:
        passage.idempotency = scoped_key, owner
        return None
    return _replay(answer)


def _replay(answer):
    """The stored answer, its URLs naming this request's host (the first
    request may have come through another allowed name of the service).
    Only the service's own URLs are rebased (`Location`, `Link` and the
    body's `$schema`): the record's fields are the user's text, which may
    well quote the service's address."""
    old, new = answer.get("base", request.host_url), request.host_url
    body, headers = answer["body"], dict(answer["headers"])
    if old != new:
        for name in _REBASED_HEADERS:
            if name in headers:
                headers[name] = headers[name].replace(old, new)
        body = _rebased_schema(body, old, new)
    response = current_app.response_class(body, status=answer["status"])
    response.headers.update(headers)
    response.headers["Idempotent-Replayed"] = "true"
    return response


def _rebased_schema(body, old, new):
    """`body` (a JSON answer) with its `$schema` under `new` instead of `old`."""
    try:
        document = current_app.json.loads(body)
    except ValueError:
        return body
    schema = document.get("$schema") if isinstance(document, dict) else None
    if not isinstance(schema, str) or not schema.startswith(old):
        return body
    document["$schema"] = new + schema[len(old):]
    return current_app.json.dumps(document) + ("\n" if body.endswith("\n") else "")


def keep_or_release(passage, response):
    """The gate's way out: keep a successful answer for replay, forget a failed one."""
    reservation, passage.idempotency = passage.idempotency, None
    if reservation is not None:
        store = get_store().idempotency
        if 200 <= response.status_code < 300:
            store.complete(*reservation, {
                "status": response.status_code, "base": request.host_url,
                "body": response.get_data(as_text=True),
                "headers": {h: response.headers[h] for h in _REPLAYED_HEADERS
                            if h in response.headers}})
        else:
            store.release(*reservation)
    return response
