"""The tokens' store (inventory/resources/tokens/store.py): a caller read
once on the embedded store until the tokens change; a revoked token never
authenticates again, on MongoDB, and under racing threads."""
import pytest

from tests.support import stores


class _CountingReads:
    """A collection whose `find_one`s are counted."""

    def __init__(self, collection):
        self.collection, self.reads = collection, 0

    def find_one(self, *args, **kwargs):
        self.reads += 1
        return self.collection.find_one(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.collection, name)


def test_a_tokens_caller_is_read_once_on_the_embedded_store_until_the_tokens_change(store):
    record, secret = store.tokens.create({"name": "ci", "role": "writer"}, "t")
    counting = store.tokens.collection = _CountingReads(store.tokens.collection)
    assert store.tokens.authenticate(secret)["role"] == "writer"  # (its last use recorded)
    reads = counting.reads
    for _ in range(3):
        assert store.tokens.authenticate(secret)["role"] == "writer"
    # (pymongo's collection answers `writes` with a sub-collection)
    embedded = isinstance(getattr(counting.collection, "writes", None), int)
    assert counting.reads - reads == (1 if embedded else 3)  # MongoDB: every time
    # any write to the tokens, by any way, is seen by the next request
    counting.update_one({"_id": record["id"]}, {"$set": {"role": "reader"}})
    assert store.tokens.authenticate(secret)["role"] == "reader"
    store.tokens.revoke(record["id"])
    assert store.tokens.authenticate(secret) is None
    assert store.tokens.authenticate("not" + secret) is None


@pytest.fixture
def mongodb_like_store():
    """A store over a collection that is not the embedded store's
    (tests.support.stores)."""
    return stores.mongodb_like_store()


def test_a_revoked_token_never_authenticates_again_on_mongodb(mongodb_like_store):
    store = mongodb_like_store
    record, secret = store.tokens.create({"name": "ci", "role": "writer"}, "t")
    assert store.tokens.authenticate(secret) is not None  # its last use recorded
    assert store.tokens.authenticate(secret) is not None
    store.tokens.revoke(record["id"])
    assert store.tokens.authenticate(secret) is None


@pytest.mark.slow
def test_no_token_authenticates_once_its_revoke_returned_under_threads(store):
    """The tokens' cache of callers (the embedded store's count of writes)
    against revokes racing it: a request that begins after a revoke
    returned never passes, however the threads interleave."""
    import threading

    late = []
    for round_ in range(15):
        tokens = [store.tokens.create({"name": f"t{round_}-{i}", "role": "reader"}, "t")
                  for i in range(3)]
        for _, secret in tokens:
            store.tokens.authenticate(secret)  # its last use recorded: read from the cache now
        stop, threads = threading.Event(), []

        def hammer(secret, revoked):
            while not stop.is_set():
                began_after = revoked.is_set()
                if store.tokens.authenticate(secret) is not None and began_after:
                    late.append(secret)

        revokes = [threading.Event() for _ in tokens]
        for (_, secret), revoked in zip(tokens, revokes):
            threads += [threading.Thread(target=hammer, args=(secret, revoked)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for (record, _), revoked in zip(tokens, revokes):
            store.tokens.revoke(record["id"])
            revoked.set()
        stop.set()
        for thread in threads:
            thread.join()
        assert all(store.tokens.authenticate(secret) is None for _, secret in tokens)
    assert late == []
