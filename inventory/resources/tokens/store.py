"""API tokens: stored only as SHA-256 hashes of their secrets.

The secrets are 256 random bits, so a fast hash is enough (there is nothing
to brute-force), and the lookup by hash reveals nothing about other tokens.
"""
import hashlib
import hmac
import logging
import secrets
import time
from datetime import datetime, timedelta, timezone

from inventory.core.errors import Unavailable
from inventory.core.ids import new_id, now_rfc3339, rfc3339
from inventory.resources.tokens.spec import SECRET_PREFIX, SPEC
from inventory.store.base import DELETING, ResourceStore

LAST_USED_PRECISION = timedelta(minutes=1)  # at most one write a minute per token

log = logging.getLogger("inventory")


def hash_secret(secret):
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


class TokenStore(ResourceStore):
    spec = SPEC
    key_field = "id"

    def configure(self, settings):
        self.revoked_here = set()  # ids revoked by this process (the rest: looked up)
    scope_field = "organization"

    def to_api(self, doc):
        record = super().to_api(doc)
        record.pop("hash", None)  # never leaves the store
        record.setdefault("organization", None)
        record.setdefault("last_used_on", None)
        return record

    organizations = None  # the organizations tokens may be scoped to, set by Store

    @staticmethod
    def new_secret():
        """A token's secret: 256 random bits, with the form's prefix."""
        return SECRET_PREFIX + secrets.token_urlsafe(32)

    def create(self, body, principal, scope=None):
        """A new token record, and its secret (shown this once). A caller
        confined to an organization makes tokens of that organization only.
        A token of an organization is made like any child record (see
        inventory.store.base): it cannot outlive its organization."""
        org = self.organization_of_new(body.get("organization"), scope)
        secret = self.new_secret()
        doc = {"_id": new_id("tok"), "name": body["name"], "role": body["role"],
               "organization": org, "hash": hash_secret(secret),
               "created_by": principal, "created_on": now_rfc3339(), "last_used_on": None}
        self.insert_in_organization(doc, org)
        return self.to_api(doc), secret

    def authenticate(self, secret):
        """The record of the token whose secret this is, or None."""
        digest = hash_secret(secret)
        doc = self.collection.find_one({"hash": digest})
        # a token marked by a revoke that did not finish is revoked already
        if doc is None or doc.get(DELETING) or not hmac.compare_digest(doc["hash"], digest):
            return None
        try:
            self._touch(doc)
        except Unavailable:  # a full disk or an away database refuses it: the read goes on
            if not self._warned:
                log.warning("A token's last use could not be recorded (the store refuses "
                            "writes); reads go on without it.")
                self._warned = True
        return self.to_api(doc)

    _warned = False

    _stale = (None, "")  # (this second, the last_used_on older than which is rewritten)

    def _touch(self, doc):
        last = doc.get("last_used_on")
        second, stale = self._stale
        if second != int(time.time()):  # formatted once a second, not once a request
            second = int(time.time())
            stale = rfc3339(datetime.fromtimestamp(second, timezone.utc) - LAST_USED_PRECISION)
            self._stale = (second, stale)
        if last is None or last < stale:
            self.collection.update_one({"_id": doc["_id"]},
                                       {"$set": {"last_used_on": now_rfc3339()}})

    def revoke(self, key, scope=None):
        doc = self.collection.find_one(self.match(key, scope, live=False), {"_id": 1})
        if doc is not None:  # (a half-revoked one too: the delete finishes it)
            self.revoked_here.add(doc["_id"])  # this process's streams and waits end at once
        self.delete(key, scope=scope)
        if self.feed is not None:
            self.feed.wake_all()

    def still_valid(self, key):
        """Whether the token with id `key` still authenticates (a keyed read)."""
        if key in self.revoked_here:
            return False
        doc = self.collection.find_one({"_id": key}, {"_id": 1, DELETING: 1})
        return doc is not None and not doc.get(DELETING)
