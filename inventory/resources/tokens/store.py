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
from inventory.store.base import ResourceStore
from inventory.store.records import DELETING

LAST_USED_PRECISION = timedelta(minutes=1)  # at most one write a minute per token

log = logging.getLogger("inventory")


def hash_secret(secret):
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


class TokenStore(ResourceStore):
    spec = SPEC
    key_field = "id"

    def configure(self, settings):
        self.revoked_here = set()  # ids revoked by this process (the rest: looked up)
        # On the embedded store (one process, a count of the collection's
        # writes): (the count, {hash: record} of the tokens found while the
        # count was that), one tuple so that no thread sees one without the
        # other; any write to the tokens (a revoke, a last use kept, a new
        # token) retires it. MongoDB has no such count (other processes
        # write too): there every request reads its token.
        self._known = (None, {})
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
        """The record of the token whose secret this is, or None (read-only:
        the embedded store hands the same one to every request until the
        tokens change)."""
        digest = hash_secret(secret)
        writes = getattr(self.collection, "writes", None)  # read before the token is
        if writes.__class__ is not int:  # pymongo's: the sub-collection `tokens.writes`
            writes = None
        known_at, known = self._known
        if writes is not None and writes != known_at:
            known_at, known = self._known = (writes, {})
        record = known.get(digest)
        if record is not None and not self._last_use_is_stale(record["last_used_on"]):
            return record
        doc = self.collection.find_one({"hash": digest})
        # a token marked by a revoke that did not finish is revoked already
        if doc is None or doc.get(DELETING) or not hmac.compare_digest(doc["hash"], digest):
            return None
        record = self.to_api(doc)
        if not self._last_use_is_stale(doc.get("last_used_on")):
            if writes is not None:  # (a dict retired meanwhile keeps it to itself)
                known[digest] = record
            return record
        try:
            self.collection.update_one({"_id": doc["_id"]},
                                       {"$set": {"last_used_on": now_rfc3339()}})
        except Unavailable:  # a full disk or an away database refuses it: the read goes on
            if not self._warned:
                log.warning("A token's last use could not be recorded (the store refuses "
                            "writes); reads go on without it.")
                self._warned = True
        return record

    _warned = False

    _stale = (None, "")  # (this second, the last_used_on older than which is rewritten)

    def _last_use_is_stale(self, last):
        """Whether a token last used at `last` should have its use recorded."""
        second, stale = self._stale
        if second != int(time.time()):  # formatted once a second, not once a request
            second = int(time.time())
            stale = rfc3339(datetime.fromtimestamp(second, timezone.utc) - LAST_USED_PRECISION)
            self._stale = (second, stale)
        return last is None or last < stale

    def revoke(self, key, scope=None):
        doc = self.collection.find_one(self.match(key, scope, live=False), {"_id": 1})
        if doc is not None:  # (a half-revoked one too: the delete finishes it)
            self.revoked_here.add(doc["_id"])  # this process's streams and waits end at once
        self.delete(key, scope=scope)
        if self.feed is not None:
            self.feed.wake_all()

    def live_record(self, key):
        """The record of the token with id `key` while it still
        authenticates, else None (a keyed read: a console session's token,
        read on each of its requests)."""
        if key in self.revoked_here:
            return None
        doc = self.collection.find_one({"_id": key})
        return None if doc is None or doc.get(DELETING) else self.to_api(doc)

    def still_valid(self, key):
        """Whether the token with id `key` still authenticates (a keyed read)."""
        if key in self.revoked_here:
            return False
        doc = self.collection.find_one({"_id": key}, {"_id": 1, DELETING: 1})
        return doc is not None and not doc.get(DELETING)
