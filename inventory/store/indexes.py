"""Every index the store's queries need, made by `create-indexes` (the
release step on MongoDB; each start of the embedded store), with the pass
that gives records written before an ordering or a stored field existed
their values. TTL indexes the database refuses are noted (TTL_REFUSED) for
the sweep (inventory.store.retention).

`Indexes` is this part of the `Store` (inventory.store)."""
import pymongo.errors
from pymongo import ASCENDING

from inventory.store.outbox import OUTBOX_SINCE
from inventory.store.records import DELETING
from inventory.store.retention import TTL_REFUSED

_NOT_IMPLEMENTED = 238  # a server's refusal of what it does not implement (FerretDB)


class Indexes:
    """The indexes, and the passes that fill what they index."""

    def create_indexes(self, unless_known=False):
        """Every index the queries need, and the order keys they index. With
        `unless_known` (the embedded store's start), the pass that adds
        missing order keys is skipped when the declared ones are those the
        last pass recorded: every record since was written with them, and on
        mongomock the pass reads every record."""
        for resource in self.listed():
            for keys, options in resource.spec.indexes:
                resource.collection.create_index(list(keys), **options)
        for keys, options in self.events.indexes():
            self.events.collection.create_index(keys, **options)
        self.sessions.collection.create_index([("token", ASCENDING)])  # a revoke ends them
        refused = [collection.name for collection, field, seconds in self.expiring()
                   if not self._create_ttl_index(collection, field, seconds)]
        if refused:
            self.db.settings.update_one({"_id": TTL_REFUSED}, {"$set": {"value": refused}},
                                        upsert=True)
        elif self.db.settings.find_one({"_id": TTL_REFUSED}) is not None:  # now held
            self.db.settings.delete_one({"_id": TTL_REFUSED})
        for resource in self.listed():
            for keys in resource.order_indexes():
                resource.collection.create_index(keys)
            # the sweepers' queries: records with events not yet in the feed,
            # records a delete marked
            resource.collection.create_index([(OUTBOX_SINCE, ASCENDING)], sparse=True)
            resource.collection.create_index([(DELETING, ASCENDING)], sparse=True)
        self.organizations.quotas.count_uncounted()  # written before quotas existed
        declared = {resource.collection.name: [field for _, field in resource.kept_orderings()]
                    for resource in self.listed()}
        # (the fields each resource gives records written before they existed
        # are named too: a new one makes the pass run once more)
        backfilled = {resource.collection.name: list(resource.backfilled)
                      for resource in self.listed() if resource.backfilled}
        marker = {"_id": "order-keys", "value": declared, "derived": backfilled}
        if unless_known and self.db.settings.find_one({"_id": "order-keys"}) == marker:
            return
        for resource in self.listed():
            resource.add_missing_order_keys()
            resource.add_missing_fields()
        if not unless_known:  # the release step's (the embedded start's comes after it answers)
            self.settle_in_turns()
        if unless_known:
            self.db.settings.update_one({"_id": "order-keys"}, {"$set": {
                "value": declared, "derived": backfilled}}, upsert=True)

    def settle_in_turns(self):
        """Each resource's derived fields set right where writes left them
        behind (ResourceStore.settle_in_turns): the embedded store's start
        runs this after its first answer; how many records. Those written
        with no event: every resource hears of them (others_settled)."""
        settled = sum(resource.settle_in_turns() for resource in self.listed())
        if settled:
            for resource in self.listed():
                resource.others_settled()
        return settled

    def _create_ttl_index(self, collection, field, seconds):
        """A TTL index, or its new age when it exists with another
        (SCAN_RETENTION_DAYS changed): MongoDB changes it in place (collMod).
        False when the database refuses TTL indexes (FerretDB 1.x: code 238,
        NotImplemented): a plain index on `field` then serves the sweep."""
        try:
            collection.create_index([(field, ASCENDING)], expireAfterSeconds=seconds)
        except pymongo.errors.OperationFailure as error:
            if error.code == _NOT_IMPLEMENTED:
                collection.create_index([(field, ASCENDING)])
                return False
            self.db.command("collMod", collection.name, index={
                "keyPattern": {field: 1}, "expireAfterSeconds": seconds})
        return True
