"""What the database keeps for a time only (idempotency keys, sessions,
events, rate windows, what a resource declares: scans): each expired by a
TTL index on its date field, or, where the database refuses TTL indexes
(FerretDB), by the service's own sweep of what they would expire.

`Retention` is this part of the `Store` (inventory.store); the indexes
themselves are made by inventory.store.indexes."""
import logging
from datetime import timedelta

from pymongo import ASCENDING

from inventory.store.idempotency import KEEP_FOR
from inventory.store.outages import every
from inventory.store.records import stored_now
from inventory.store.sessions import IDLE

log = logging.getLogger(__name__)

# Where the database refuses TTL indexes (FerretDB), the service's own sweep of
# what they would expire: every RETENTION_SWEEP_SECONDS (MongoDB's TTL monitor
# runs every 60 s), RETENTION_SLICE records a delete.
RETENTION_SWEEP_SECONDS = 60.0
RETENTION_SLICE = 500
# The settings document create-indexes writes when the database refused a TTL
# index: the serving processes then sweep (Store.start_sweeping_expired).
TTL_REFUSED = "ttl-refused"


class Retention:
    """The records kept for a time, and the sweep where TTL indexes are refused."""

    def expiring(self):
        """(collection, field, seconds): the records kept for a time after
        the date in `field`, each expired by a TTL index (or the sweep)."""
        return [(self.idempotency.collection, "created_at", int(KEEP_FOR.total_seconds())),
                (self.sessions.collection, "last_seen", int(IDLE.total_seconds())),
                (self.events.collection, "at", int(self.events.retention.total_seconds())),
                (self.rate_windows.collection, "expires", 0),  # each window's own end
                *[(resource.collection, field, seconds) for resource in self.listed()
                  for field, seconds in resource.expiring()]]

    def ttl_refused(self):
        """The collections whose TTL index the database refused at the last
        create-indexes (their records are swept by the service instead)."""
        doc = self.db.settings.find_one({"_id": TTL_REFUSED})
        return (doc or {}).get("value") or []

    def sweep_expired(self, now=None):
        """Delete what the refused TTL indexes would have expired, a slice of
        RETENTION_SLICE records at a time, oldest first (a read and a delete
        by key: no write ever large, whatever is due); how many went.
        Which were refused is read each time (a create-indexes run since is
        followed), and said when this process first finds them.
        Several processes may sweep at once: a delete of what is gone is a no-op."""
        refused, now, deleted = self.ttl_refused(), now or stored_now(), 0
        if refused and refused != self._refused_said:
            log.warning("The database refused TTL indexes at create-indexes (%s): this process "
                        "deletes their expired records itself every %d s.", ", ".join(refused),
                        RETENTION_SWEEP_SECONDS)
        self._refused_said = refused
        for collection, field, seconds in self.expiring():
            if collection.name not in refused:
                continue
            cutoff = now - timedelta(seconds=seconds)
            while True:
                keys = [doc["_id"] for doc in collection.find(
                    {field: {"$lt": cutoff}}, {"_id": 1}, sort=[(field, ASCENDING)],
                    limit=RETENTION_SLICE)]
                if keys:
                    deleted += collection.delete_many(
                        {"_id": {"$in": keys}, field: {"$lt": cutoff}}).deleted_count
                if len(keys) < RETENTION_SLICE:
                    break
        return deleted

    def start_sweeping_expired(self):
        """In this process, for its life, on MongoDB: sweep what the TTL
        indexes the database refused would expire, now and every
        RETENTION_SWEEP_SECONDS (nothing where none were). Not a read at
        start: a start while the database is away must not fail."""
        every(RETENTION_SWEEP_SECONDS, "Sweeping expired records", "retention-sweeper",
              self.sweep_expired)
