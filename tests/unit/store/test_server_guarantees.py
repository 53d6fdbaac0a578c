"""What the store's protocol needs of its server, and MongoDB guarantees: a
single-document write is atomic, its condition and its change one step, so
that of parallel conditional writes to one document each sees the others'
(quota counts, revisions, delete marks, webhook leases and outboxes rely on
it: inventory/store/base.py). Stock FerretDB 1.24 on SQLite does not: its
update reads the document, changes it and writes it back whole, and another
write may come between, so this fails there; scripts/ferretdb builds it
with writes held one at a time (docs/deploy.md)."""
import threading

import pytest
from limits import parse_many
from limits.errors import StorageError

from inventory.http.rate_limits import RateCounter, storage
from tests.conftest import FERRETDB, REAL_MONGO
from tests.support.races import run_together

WRITERS, TRIES, LIMIT = 8, 25, 120


def test_parallel_conditional_updates_of_one_document_are_atomic(store):
    counter = store.db["server_guarantees"]
    counter.insert_one({"_id": "counter", "n": 0, "by": {}})
    matched, lock = [], threading.Lock()

    def write(writer):
        for attempt in range(TRIES):  # the writers ask for more than LIMIT in all
            result = counter.update_one(
                {"_id": "counter", "n": {"$lt": LIMIT}},
                {"$inc": {"n": 1}, "$set": {f"by.w{writer}-{attempt}": True}})
            with lock:
                matched.append(result.matched_count)
    run_together([lambda writer=writer: write(writer) for writer in range(WRITERS)])
    doc = counter.find_one({"_id": "counter"})
    # each matched write counted once (no $inc lost), none past the condition,
    # and every matched write's own field kept (no write of another lost it)
    assert (sum(matched), doc["n"], len(doc["by"])) == (LIMIT, LIMIT, LIMIT)


@pytest.mark.skipif(not REAL_MONGO, reason="the embedded store counts in its process's memory")
@pytest.mark.xfail(FERRETDB, strict=True, raises=StorageError, reason=(
    "FerretDB 1.24 refuses what the limits library's MongoDB storage sends: TTL indexes "
    "(code 238), update pipelines ('Aggregation pipelines are not supported yet') and "
    "findAndModify's `fields`; there the service counts in each process's memory "
    "(docs/deploy.md)"))
def test_rate_limits_are_counted_on_the_server(config, store):
    """Every process counts each caller's requests in one place: the
    service's database, through the `limits` library's MongoDB storage
    (inventory.http.rate_limits), with no fallback to this process's memory."""
    counter = RateCounter(*storage(config, store.db.name), fallback=False)
    try:
        items = parse_many("5 per day")
        assert [counter.hit(items, "caller")[0] for _ in range(7)] == [True] * 5 + [False] * 2
        assert store.db["rate_limit_windows"].count_documents({}) == 1
    finally:  # its client closed now, not by its finaliser as the interpreter exits
        counter.storage.__del__()
