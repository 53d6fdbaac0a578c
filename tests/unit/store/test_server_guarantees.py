"""What the store's protocol needs of its server, and MongoDB guarantees: a
single-document write is atomic, its condition and its change one step, so
that of parallel conditional writes to one document each sees the others'
(quota counts, revisions, delete marks, webhook leases, outboxes and rate
windows rely on it: inventory/store/base.py, rate_counters.py). Stock
FerretDB 1.24 on SQLite does not: its update reads the document, changes it
and writes it back whole, and another write may come between, so this fails
there; scripts/ferretdb builds it with writes held one at a time
(docs/deploy.md)."""
import threading

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

