"""Idempotency keys: the first answer to a create, kept 24 hours for replay.

A key is reserved by inserting its document (the unique `_id` makes exactly
one of several racing requests the owner); the owner stores its answer when
done, or removes the reservation when it failed so that a retry can run.
A TTL index expires keys on MongoDB (or the service's sweep, where the server
refuses TTL indexes: inventory.store.Store.sweep_expired); reads also ignore
expired ones, since the TTL monitor runs only once a minute (and not at all
in the embedded store).

A reservation whose request died (a crash, a killed process) would block its
key for a day. So a pending reservation holds a lease of LEASE: after it, a
retry takes the key over and runs again. Each reservation carries its own
owner token, so a request that outlived its lease can neither store its
answer over the new owner's nor release the new owner's reservation.
"""
import secrets
from datetime import datetime, timedelta, timezone

from pymongo.errors import DuplicateKeyError

from inventory.core.errors import Contended, InProgress, KeyReused

KEEP_FOR = timedelta(hours=24)
# Longer than any request runs: the serving model cuts a request's connection
# after 30 s (inventory.server.worker), and each database call times out sooner.
LEASE = timedelta(seconds=60)


def _now():
    # naive UTC: what pymongo hands back by default, so comparisons line up
    return datetime.now(timezone.utc).replace(tzinfo=None)


class IdempotencyStore:
    collection_name = "idempotency"

    def __init__(self, db):
        self.collection = db[self.collection_name]

    def reserve(self, key, fingerprint):
        """(owner, None): the caller owns `key` now and must `complete` or
        `release` it with `owner`. (None, answer): the stored answer to replay."""
        for _ in range(3):
            now, owner = _now(), secrets.token_hex(8)
            try:
                self.collection.insert_one({"_id": key, "fingerprint": fingerprint,
                                            "state": "pending", "owner": owner,
                                            "created_at": now})
                return owner, None
            except DuplicateKeyError:
                pass
            existing = self.collection.find_one({"_id": key})
            if existing is None:
                continue  # released or expired meanwhile: try again
            stale = existing["created_at"] < now - (
                KEEP_FOR if existing["state"] == "done" else LEASE)
            if stale:  # expired, or a lease its request did not live to end
                self.collection.delete_one({"_id": key, "created_at": existing["created_at"],
                                            "owner": existing.get("owner")})
                continue
            if existing["fingerprint"] != fingerprint:
                raise KeyReused("This Idempotency-Key was used with a different request; "
                                "use a new key.", key.split(":", 1)[1])
            if existing["state"] != "done":
                raise InProgress("A request with this Idempotency-Key is still being "
                               "processed; retry in a moment.")
            return None, existing["answer"]
        raise Contended("This Idempotency-Key is changing hands; retry in a moment.")

    def complete(self, key, owner, answer):
        self.collection.update_one({"_id": key, "owner": owner, "state": "pending"},
                                   {"$set": {"state": "done", "answer": answer}})

    def release(self, key, owner):
        self.collection.delete_one({"_id": key, "owner": owner, "state": "pending"})
