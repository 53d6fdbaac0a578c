"""A start of the embedded store over a data directory
(inventory/embedded/database.py, `embedded_database`): once the journal has
replayed it, each collection is warmed before anything is served, so that
no first read makes its caches under the store's lock."""
import datetime
import os

import pytest

from inventory.embedded.database import _holders, embedded_database

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


@pytest.fixture
def caches():
    """A collection's caches, private to LockedCollection: its key order,
    the lookups of its indexed fields (each value's holders) and its expiry
    heap. The test compares what a start made with what first use makes,
    which no public API shows; `forget` empties them as an unused
    collection has them."""
    def holders(lookup):
        return {value: sorted(_holders(lookup, value)) for value in lookup}

    class Caches:
        @staticmethod
        def keys(collection):
            return collection._keys

        @staticmethod
        def indexed_fields(collection):
            return set(collection._by_field)

        @staticmethod
        def made_lookup(collection, field):
            return holders(collection._by_field[field])

        @staticmethod
        def expiring(collection):
            return sorted(collection._expiring)

        @staticmethod
        def forget(collection):
            collection._by_field, collection._keys, collection._expiring = {}, None, None

        @staticmethod
        def first_use_lookup(collection, field):
            return holders(collection._index_lookup(field))
    return Caches()


def test_a_start_makes_the_caches_reads_would_make_under_the_lock(tmp_path, caches):
    """embedded_database warms each collection before anything is served:
    the key order, the lookups of the API's indexed fields and the expiry
    heap are there, and equal to what first use would have made."""
    db = embedded_database("inventory", str(tmp_path), "no")
    db.things.create_index([("parent", 1)])
    db.things.create_index([("_order_name", 1)])
    db.things.create_index([("at", 1)], expireAfterSeconds=3600)
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None, microsecond=0)
    db.things.insert_many([{"_id": f"k{i:02d}", "parent": f"p{i % 3}", "_order_name": str(i),
                            "at": now} for i in range(30, 0, -1)])
    db.journal.close()
    db = embedded_database("inventory", str(tmp_path), "no")
    things = db.things
    assert caches.keys(things) == sorted(f"k{i:02d}" for i in range(1, 31))
    assert caches.indexed_fields(things) == {"parent"}  # not the internal order key
    warmed = caches.made_lookup(things, "parent")
    assert warmed == {f"p{n}": sorted(f"k{i:02d}" for i in range(1, 31) if i % 3 == n)
                      for n in range(3)}
    assert caches.expiring(things) == sorted((now, f"k{i:02d}") for i in range(1, 31))
    caches.forget(things)
    assert caches.first_use_lookup(things, "parent") == warmed
    db.journal.close()
