"""Continuation tokens: signed, opaque, bound to one list, filter and order."""
import hashlib
import secrets

from flask import current_app
from itsdangerous import BadData, URLSafeSerializer

from inventory.core.errors import BadContinuation


class ContinuationTokens:
    """Makes and checks `continue` tokens.

    A token carries where the page it continues stopped (the last record's
    key, or its order key: its sort values and key), the list it belongs to
    (say `kubeclusters/k8scl_.../scans`), a digest of the filter and the
    order. It is signed (HMAC-SHA256), so a client can neither forge a
    position nor replay a token on another list, filter or order.
    """

    def __init__(self, key_source):
        self._key_source = key_source  # called once, on first use (after fork)
        self._serializer = None

    def _signer(self):
        if self._serializer is None:
            self._serializer = URLSafeSerializer(
                self._key_source(), salt="inventory.continue",
                signer_kwargs={"digest_method": hashlib.sha256})
        return self._serializer

    @staticmethod
    def _filter_digest(filter_text):
        return hashlib.sha256((filter_text or "").encode()).hexdigest()[:16]

    def encode(self, list_key, filter_text, after, order="", now=None):
        """A token continuing after `after`; `now`: the instant the filter's
        relative times were resolved against (RFC 3339), which the next
        pages resolve them against too, so that a walk stays exact."""
        payload = [list_key, self._filter_digest(filter_text), after, order]
        return self._signer().dumps(payload if now is None else [*payload, now])

    def decode(self, token, list_key, filter_text, order=""):
        """(where the token continues after, the instant its filter's
        relative times were resolved against or None); a 422 at
        `query.continue` if it is not a token of this list, filter and
        order (`order_by`, canonical)."""
        try:
            token_list, digest, after, token_order, *rest = self._signer().loads(token)
        except (BadData, ValueError, TypeError):
            raise BadContinuation("Not a continuation token of this service (malformed or "
                                  "tampered with).", token) from None
        if token_list != list_key:
            raise BadContinuation("The token belongs to another list.", token)
        if digest != self._filter_digest(filter_text):
            raise BadContinuation("The token was made with another filter; "
                                  "pass the same filter with it.", token)
        if token_order != order:
            made = f"with order_by={token_order!r}" if token_order else "without order_by"
            raise BadContinuation(f"The token was made {made}; pass the same order_by "
                                  "with it.", token)
        now = rest[0] if len(rest) == 1 else None
        if not isinstance(after, str) or len(rest) > 1 or (rest and not isinstance(now, str)):
            raise BadContinuation("Not a continuation token of this service.", token)
        return after, now


def init_app(app, config, store):
    if config.SECRET_KEY:
        source = lambda: config.SECRET_KEY  # noqa: E731
    elif config.embedded and not config.journaled:
        key = secrets.token_hex(32)  # tokens die with the in-memory data anyway
        source = lambda: key  # noqa: E731
    else:
        source = store.signing_key
    app.extensions["inventory.tokens"] = ContinuationTokens(source)


def tokens():
    return current_app.extensions["inventory.tokens"]
