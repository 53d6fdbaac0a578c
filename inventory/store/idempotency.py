"""Idempotency keys: the first answer to a create, kept 24 hours for replay.

A key is reserved by inserting its document (the unique `_id` makes exactly
one of several racing requests the owner); the owner stores its answer when
done, or removes the reservation when it failed so that a retry can run.
A TTL index expires keys on MongoDB; reads also ignore expired ones, since
the TTL monitor runs only once a minute (and not at all in the embedded store).
"""
from datetime import datetime, timedelta, timezone

from pymongo.errors import DuplicateKeyError

from inventory.errors import Conflict, Unprocessable

KEEP_FOR = timedelta(hours=24)


def _now():
    # naive UTC: what pymongo hands back by default, so comparisons line up
    return datetime.now(timezone.utc).replace(tzinfo=None)


class IdempotencyStore:
    collection_name = "idempotency"

    def __init__(self, db):
        self.collection = db[self.collection_name]

    def reserve(self, key, fingerprint):
        """None: the caller owns `key` now and must `complete` or `release` it.
        Otherwise the stored answer (a dict) to replay."""
        for _ in range(3):
            now = _now()
            try:
                self.collection.insert_one({"_id": key, "fingerprint": fingerprint,
                                            "state": "pending", "created_at": now})
                return None
            except DuplicateKeyError:
                pass
            existing = self.collection.find_one({"_id": key})
            if existing is None:
                continue  # released or expired meanwhile: try again
            if existing["created_at"] < now - KEEP_FOR:
                self.collection.delete_one({"_id": key, "created_at": existing["created_at"]})
                continue
            if existing["fingerprint"] != fingerprint:
                raise Unprocessable("header.idempotency-key", "This Idempotency-Key was used "
                                    "with a different request; use a new key.", key.split(":", 1)[1])
            if existing["state"] != "done":
                raise Conflict("A request with this Idempotency-Key is still being "
                               "processed; retry in a moment.")
            return existing["answer"]
        raise Conflict("This Idempotency-Key is changing hands; retry in a moment.")

    def complete(self, key, answer):
        self.collection.update_one({"_id": key}, {"$set": {"state": "done", "answer": answer}})

    def release(self, key):
        self.collection.delete_one({"_id": key, "state": "pending"})
