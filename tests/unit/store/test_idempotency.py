"""Idempotency keys (inventory/store/idempotency.py): the first request to
reserve a key owns it and its answer is replayed to the others; a key used
with another request is refused (KeyReused), one still running is
InProgress; a released key runs again; a done key is kept KEEP_FOR, a
pending one holds its lease for LEASE, after which a retry takes it over,
and the request that outlived its lease can touch the new owner's
reservation no more; a key that keeps changing hands gives up (Contended)."""
from datetime import datetime, timezone

import pytest
from pymongo.errors import DuplicateKeyError

from inventory.core.errors import Contended, InProgress, KeyReused
from inventory.store.idempotency import KEEP_FOR, LEASE, IdempotencyStore

KEY = "caller:k1"


class Untimed(IdempotencyStore):
    """The keys over a collection with no TTL index: what the store itself
    ignores, which the TTL index (the embedded store's expiry, on reads)
    would otherwise remove first."""

    collection_name = "idempotency_untimed"


@pytest.fixture
def keys(store):
    return Untimed(store.db)


def _now():  # naive UTC, as stored
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _aged(keys, key, age):
    """The key as if it was reserved `age` ago."""
    keys.collection.update_one({"_id": key}, {"$set": {"created_at": _now() - age}})


def test_the_first_reservation_owns_the_key_and_its_answer_is_replayed(keys):
    owner, answer = keys.reserve(KEY, "f1")
    assert owner and answer is None
    with pytest.raises(InProgress):
        keys.reserve(KEY, "f1")  # the owner has not answered yet
    keys.complete(KEY, owner, {"status": 201, "body": {"id": "org_1"}})
    assert keys.reserve(KEY, "f1") == (None, {"status": 201, "body": {"id": "org_1"}})
    assert keys.reserve(KEY, "f1") == (None, {"status": 201, "body": {"id": "org_1"}})


def test_a_key_used_with_another_request_is_refused_naming_the_callers_key(keys):
    owner, _ = keys.reserve(KEY, "f1")
    with pytest.raises(KeyReused) as refused:
        keys.reserve(KEY, "f2")
    assert refused.value.key == "k1"  # the caller's key, without the caller
    keys.complete(KEY, owner, {"status": 201})
    with pytest.raises(KeyReused):
        keys.reserve(KEY, "f2")


def test_a_released_key_runs_again_under_a_new_owner(keys):
    owner, _ = keys.reserve(KEY, "f1")
    keys.release(KEY, owner)  # the request failed
    again, answer = keys.reserve(KEY, "f1")
    assert again and again != owner and answer is None


def test_a_done_key_is_kept_for_keep_for_then_runs_again(keys):
    owner, _ = keys.reserve(KEY, "f1")
    keys.complete(KEY, owner, {"status": 201})
    _aged(keys, KEY, KEEP_FOR - LEASE)  # past any lease, within its keeping
    assert keys.reserve(KEY, "f1") == (None, {"status": 201})
    _aged(keys, KEY, KEEP_FOR + LEASE)  # expired, though the TTL monitor has not run
    owner, answer = keys.reserve(KEY, "f2")
    assert owner and answer is None


def test_a_pending_key_holds_its_lease_then_a_retry_takes_it_over(keys):
    owner, _ = keys.reserve(KEY, "f1")
    _aged(keys, KEY, LEASE / 2)
    with pytest.raises(InProgress):
        keys.reserve(KEY, "f1")
    _aged(keys, KEY, LEASE * 2)  # its request died
    new_owner, answer = keys.reserve(KEY, "f1")
    assert new_owner and new_owner != owner and answer is None


def test_a_request_that_outlived_its_lease_cannot_overwrite_the_new_owners_answer(keys):
    owner, _ = keys.reserve(KEY, "fingerprint")
    _aged(keys, KEY, LEASE * 2)
    new_owner, _ = keys.reserve(KEY, "fingerprint")
    assert new_owner != owner
    keys.complete(KEY, owner, {"late": True})  # the old request, at last
    keys.release(KEY, owner)
    keys.complete(KEY, new_owner, {"status": 201})
    assert keys.reserve(KEY, "fingerprint") == (None, {"status": 201})


class ChangingHands:
    """A collection where the key is always taken, and always gone again
    by the time it is read."""

    def __init__(self, collection):
        self.collection = collection

    def insert_one(self, document):
        raise DuplicateKeyError("taken")

    def find_one(self, query):
        return None


def test_a_key_that_keeps_changing_hands_gives_up(keys, monkeypatch):
    monkeypatch.setattr(keys, "collection",
                        ChangingHands(keys.collection))
    with pytest.raises(Contended):
        keys.reserve(KEY, "f1")
