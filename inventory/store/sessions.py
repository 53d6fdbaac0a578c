"""The console's sign-in sessions (inventory/ui): a browser holds a random
session id in a cookie; this collection holds, under the id's SHA-256 hash
(a reader of the database learns no usable id), which token signed in, the
form token (CSRF) of the session's forms, and when it was last used.

A session is only a pointer to its token: the HTTP layer reads the token on
every request (inventory.http.auth), so revoking it ends its sessions at
once. The bootstrap admin's sessions keep a digest of its secret: when
INVENTORY_ADMIN_TOKEN changes they are ended (at the first use of each, and
at the start of the embedded store or the release step on MongoDB), so
setting the old secret back revives none. An idle session (IDLE) or an old
one (LIFETIME) is refused on read,
and removed by the TTL index on `last_seen` (or the service's sweep where
the database refuses TTL indexes); sign-out removes it at once.
"""
import hashlib
import secrets
from datetime import datetime, timedelta, timezone

IDLE = timedelta(minutes=30)  # unused this long, a session is over
LIFETIME = timedelta(hours=12)  # however busy, a session is over this long after sign-in
TOUCH_EVERY = timedelta(minutes=1)  # at most one write a minute to keep a session alive


def _now():
    # naive UTC: what pymongo hands back by default, so comparisons line up
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _digest(session_id):
    return hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()


class SessionStore:
    collection_name = "sessions"

    def __init__(self, db):
        self.collection = db[self.collection_name]

    def start(self, token_key, credential_digest=None):
        """A new session of the token `token_key`: (its id, for the cookie
        only; its form token). `credential_digest`: for a token that is no
        record (the bootstrap admin's), a digest of its secret, so that a
        new secret ends the old one's sessions."""
        session_id, form_token = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        now = _now()
        self.collection.insert_one({"_id": _digest(session_id), "token": token_key,
                                    "credential": credential_digest, "form_token": form_token,
                                    "started": now, "last_seen": now})
        return session_id, form_token

    def find(self, session_id):
        """The live session of `session_id` ({"token", "credential",
        "form_token"}), or None (unknown, ended, idle past IDLE or older than
        LIFETIME); its last use kept, at most once a TOUCH_EVERY."""
        if not isinstance(session_id, str) or not 20 <= len(session_id) <= 100:
            return None
        key, now = _digest(session_id), _now()
        doc = self.collection.find_one({"_id": key})
        if doc is None:
            return None
        if now - doc["last_seen"] > IDLE or now - doc["started"] > LIFETIME:
            self.collection.delete_one({"_id": key})
            return None
        if now - doc["last_seen"] > TOUCH_EVERY:
            self.collection.update_one({"_id": key}, {"$set": {"last_seen": now}})
        return {"token": doc["token"], "credential": doc.get("credential"),
                "form_token": doc["form_token"]}

    def exists(self, session_id):
        """Whether `session_id`'s session is not ended (signed out, or ended
        with its token or an old admin secret): a read, no touch. What a
        long-lived request of the session (the live list's stream) looks at."""
        return self.collection.find_one({"_id": _digest(session_id)}, {"_id": 1}) is not None

    def end(self, session_id):
        """Sign-out: the session is gone at once."""
        if isinstance(session_id, str) and session_id:
            self.collection.delete_one({"_id": _digest(session_id)})

    def end_all_of(self, token_key, unless_credential=None):
        """Every session of a token (revoked: they would be refused anyway);
        with `unless_credential`, those of any other secret of a token that
        is no record (the bootstrap admin's, when its secret changed): ended,
        not only refused, so that the old secret set back does not revive
        them."""
        if unless_credential is None:
            self.collection.delete_many({"token": token_key})
        else:
            self.collection.delete_many({"token": token_key,
                                         "credential": {"$ne": unless_credential}})
