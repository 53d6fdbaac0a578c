"""Webhooks: subscriptions to the feed, each a reader that resumes from the
last event its receiver acknowledged, delivered under a lease in the store
(one deliverer per webhook across workers and instances); and their delivery
log. The deliverer is inventory/integrations/webhooks.py."""
import base64
import secrets
from datetime import datetime, timedelta, timezone

from pymongo import ReturnDocument
from pymongo.errors import DuplicateKeyError

from inventory.core.caps import (
    UNSCOPED_WEBHOOKS,
    WEBHOOK_BACKOFF,
    WEBHOOK_DELIVERY_LOG,
    WEBHOOK_GIVE_UP,
    WEBHOOK_LEASE,
)
from inventory.core.errors import KeyInUse, QuotaExceeded
from inventory.core.ids import new_id, now_rfc3339
from inventory.resources.webhooks.spec import SECRET_PREFIX, SPEC
from inventory.store import pages
from inventory.store.base import ResourceStore
from inventory.store.event_documents import ID_PREFIX as EVENT_ID_PREFIX
from inventory.store.records import LIVE, Record

EPOCH = datetime(1970, 1, 1)
_NEVER_MS = 10 ** 13  # the log's keys count down from here: newest first in key order
# `_scope` of an unscoped admin's webhook: it may see every organization's
# events (a scoped one's is its organization's id: a string to look up by)
EVERY_ORGANIZATION = "*"
# what the deliverer schedules by
_SCHEDULED = {"_id": 1, "organization": 1, "filter": 1, "_position": 1,
              "_next_attempt_at": 1, "_lease_until": 1, "_lease_owner": 1}
_SWEEP_SLICE = 200  # webhooks read at a time by `scheduled`


def _now():
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)  # BSON's precision


class WebhookStore(ResourceStore):
    spec = SPEC
    key_field = "id"
    scope_field = "organization"
    immutable_fields = ("organization",)

    def configure(self, settings):
        # called with the record of a webhook made, or made active again, in
        # this process (the deliverer looks at it at once)
        self.listeners = []
        self.deliveries = self.collection.database["webhook_deliveries"]
        self.lease = timedelta(seconds=settings.get("webhook_lease", WEBHOOK_LEASE))
        self.unscoped_quota = settings.get("unscoped_webhooks") or UNSCOPED_WEBHOOKS

    @staticmethod
    def new_secret():
        """A Standard Webhooks secret: whsec_ and 24 random bytes in base64."""
        return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(24)).decode()

    def create(self, body, principal, scope=None):
        """A new webhook, delivering the events committed from now on, and its
        secret (shown this once). A scoped admin's webhooks are its organization's."""
        org = self.organization_of_new(body.get("organization"), scope)
        secret = self.new_secret()
        doc = {"_id": new_id("whk"), "organization": org, "url": body["url"],
               "filter": body.get("filter"), "description": body.get("description", ""),
               "active": True, "inactive_reason": None, "last_delivered_event": None,
               **self.audit_new(principal), "_secret": secret, "_position": self.feed.head(),
               "_attempt": 0, "_failing_since": None, "_next_attempt_at": EPOCH,
               "_lease_owner": None, "_lease_until": EPOCH,
               "_scope": EVERY_ORGANIZATION if org is None else org}
        if org is None:
            self._insert_unscoped(doc)
        else:
            self.insert_in_organization(doc, org)
        record = self.to_api(doc)
        for listener in self.listeners:
            listener(record, resumed=False)
        return record, secret

    def _insert_unscoped(self, doc):
        """Insert an unscoped admin's webhook in one of the service's
        `unscoped_quota` seats (`_seat`, under a unique index): two creates
        racing for the last seat cannot both take it, and a deleted webhook
        frees its seat with it. QuotaExceeded when every seat is taken, or
        when as many are held as the quota allows (it may have been lowered)."""
        limit = self.unscoped_quota
        while True:
            taken = {held["_seat"] for held in self.collection.find(
                {"_seat": {"$exists": True}}, {"_seat": 1})}
            free = [seat for seat in range(limit) if seat not in taken]
            if not free or len(taken) >= limit:
                raise QuotaExceeded("webhooks", len(taken), limit)
            try:
                return self.insert({**doc, "_seat": free[0]})
            except KeyInUse:  # another create took that seat first: look again
                continue

    def update(self, key, changes, principal, scope=None, revisions=None):
        """A merge patch of `url`, `filter`, `description`, `active`. Made
        active again, it resumes where it stopped: EventExpired (410) if the
        feed no longer keeps that point."""
        if changes.get("active") is True:
            current = self.get_doc(key, scope)
            if not current["active"]:
                if current["_position"]:
                    self.feed.resolve(EVENT_ID_PREFIX + current["_position"], "body.active")
                changes = {**changes, "inactive_reason": None}
                self.collection.update_one(
                    {"_id": current["_id"]},
                    {"$set": {"_attempt": 0, "_failing_since": None, "_next_attempt_at": EPOCH}})
        elif changes.get("active") is False:
            changes = {**changes, "inactive_reason": "Made inactive by an admin."}
        record = super().update(key, changes, principal, scope, revisions)
        if changes.get("active") is True:
            for listener in self.listeners:
                listener(record, resumed=True)
        return record

    def _remove_marked(self, docs):
        super()._remove_marked(docs)
        for doc in docs:  # its deliveries' log goes with it
            key = doc["_id"]
            self.deliveries.delete_many({"_id": {"$gt": f"{key}/", "$lt": f"{key}0"}})

    # -- scheduling ---------------------------------------------------------------

    def backfill(self):
        """Give webhooks made before they existed their `_scope` and, an
        unscoped admin's, a seat (past the quota if need be: they count), at
        start."""
        for doc in self.collection.find({"_scope": {"$exists": False}}, {"organization": 1}):
            org = doc.get("organization")
            self.collection.update_one({"_id": doc["_id"]}, {"$set": {
                "_scope": EVERY_ORGANIZATION if org is None else org}})
        for doc in self.collection.find({"organization": None, "_seat": {"$exists": False}},
                                        {"_id": 1}):
            while True:
                taken = {held["_seat"] for held in self.collection.find(
                    {"_seat": {"$exists": True}}, {"_seat": 1})}
                seat = next(seat for seat in range(len(taken) + 1) if seat not in taken)
                try:
                    self.collection.update_one({"_id": doc["_id"], "_seat": {"$exists": False}},
                                               {"$set": {"_seat": seat}})
                    break
                except DuplicateKeyError:  # another worker's start took it: look again
                    continue

    def seeing(self, organizations):
        """The active webhooks that may see events of `organizations` (None
        among them: events of no organization): those organizations' and
        the unscoped admins'. A look-up by `_scope`, whatever the number of
        other tenants' webhooks."""
        scopes = [org for org in organizations if org is not None] + [EVERY_ORGANIZATION]
        return self.collection.find({"_scope": {"$in": scopes}, "active": True, **LIVE},
                                    _SCHEDULED)

    def scheduled(self, pause):
        """Every active webhook, in slices of _SWEEP_SLICE in key order,
        calling `pause()` between slices (a long read holds nothing long)."""
        after = ""
        while True:
            docs = self.collection.find({"_id": {"$gt": after}},
                                        {**_SCHEDULED, "active": 1, "_deleting": 1},
                                        sort=[("_id", 1)], limit=_SWEEP_SLICE)
            for doc in docs:
                if doc.get("active") and not doc.get("_deleting"):
                    yield doc
            if len(docs) < _SWEEP_SLICE:
                return
            after = docs[-1]["_id"]
            pause()

    def to_deliver(self, key):
        """The webhook's document, if it is active and not being deleted."""
        return self.collection.find_one({"_id": key, "active": True, **LIVE})

    def pass_unseen(self, key, position, slot, filter):
        """Move the webhook's position from `position` to `slot`: nothing
        between them it may see (with `filter`). One write, only while its
        position, filter and lease are as they were read (free: no
        deliverer is moving it)."""
        return self.collection.update_one(
            {"_id": key, "_position": position, "filter": filter,
             "_lease_until": {"$lt": _now()}, **LIVE},
            {"$set": {"_position": slot}}).matched_count == 1

    # -- delivery (under a lease) -----------------------------------------------

    def claim(self, key, owner):
        """The webhook's document with its lease taken by `owner`, or None
        if another holds it or it is no longer active."""
        now = _now()
        return self.collection.find_one_and_update(
            {"_id": key, "active": True, **LIVE,
             "$or": [{"_lease_until": {"$lt": now}}, {"_lease_owner": owner}]},
            {"$set": {"_lease_owner": owner,
                      "_lease_until": now + self.lease}},
            return_document=ReturnDocument.AFTER)

    def advance(self, key, owner, slot, delivered=False):
        """Its receiver acknowledged the event at `slot` (`delivered`), or
        nothing it should see lies up to `slot`: resume after it. False if
        `owner` lost the lease (another worker goes on from the stored position)."""
        fields = {"_position": slot, "_lease_until": _now() + self.lease}
        if delivered:
            fields.update({"last_delivered_event": EVENT_ID_PREFIX + slot, "_attempt": 0,
                           "_failing_since": None})
        return self.collection.update_one({"_id": key, "_lease_owner": owner, **LIVE},
                                          {"$set": fields}).matched_count == 1

    def still_delivering(self, key, owner, org):
        """Whether `owner` may POST the webhook's next event: it holds the
        lease, and neither the webhook nor its organization is being deleted
        (the events of their delete, or of anything after it, are never sent)."""
        if self.collection.find_one({"_id": key, "_lease_owner": owner, "active": True, **LIVE},
                                    {"_id": 1}) is None:
            return False
        return org is None or self.organizations.collection.find_one(
            {"_id": org, **LIVE}, {"_id": 1}) is not None

    def failed(self, doc, owner, reason):
        """An attempt failed: the next one after the backoff, or, once the
        first failure is WEBHOOK_GIVE_UP old, the webhook made inactive with
        `reason`. The lease is released either way."""
        now = _now()
        failing_since = doc.get("_failing_since") or now
        attempt = doc.get("_attempt", 0) + 1
        fields = {"_attempt": attempt, "_failing_since": failing_since,
                  "_lease_owner": None, "_lease_until": EPOCH}
        if (now - failing_since).total_seconds() >= WEBHOOK_GIVE_UP:
            fields.update({"active": False, "inactive_reason": (
                f"Deliveries failed for {WEBHOOK_GIVE_UP // 3600} h ({attempt} attempts); "
                f"the last: {reason}. Set active to true to resume where it stopped.")})
        else:
            delay = WEBHOOK_BACKOFF[min(attempt - 1, len(WEBHOOK_BACKOFF) - 1)]
            fields["_next_attempt_at"] = now + timedelta(seconds=delay)
        self.collection.update_one({"_id": doc["_id"], "_lease_owner": owner}, {"$set": fields})

    def release(self, key, owner, passed=None, filter=None):
        """Give the lease back; with `passed`, a slot up to which nothing
        remains for it with `filter` (past its position: events it does not
        see), resume after that, in the same write (unless the filter was
        changed meanwhile)."""
        fields = {"_lease_owner": None, "_lease_until": EPOCH}
        query = {"_id": key, "_lease_owner": owner}
        if passed:
            updated = self.collection.update_one(
                {**query, "_position": {"$lt": passed}, "filter": filter},
                {"$set": {**fields, "_position": passed}})
            if updated.matched_count:
                return
        self.collection.update_one(query, {"$set": fields})

    # -- the delivery log ---------------------------------------------------------

    def log(self, key, event_id, attempt, status_code, error, duration_ms):
        """Record an attempt; the log keeps the WEBHOOK_DELIVERY_LOG newest."""
        at = datetime.now(timezone.utc)
        countdown = _NEVER_MS - int(at.timestamp() * 1000)
        self.deliveries.insert_one({
            "_id": f"{key}/{countdown:013d}/{secrets.token_hex(4)}", "webhook": key,
            "event": event_id, "attempt": attempt, "status_code": status_code, "error": error,
            "duration_ms": duration_ms, "at": now_rfc3339()})
        # trimmed every tenth attempt or so: the log holds up to a tenth more meanwhile
        if secrets.randbelow(10):
            return
        beyond = list(self.deliveries.find({"_id": {"$gt": f"{key}/", "$lt": f"{key}0"}},
                                           {"_id": 1}, sort=[("_id", 1)],
                                           skip=WEBHOOK_DELIVERY_LOG, limit=1))
        if beyond:
            self.deliveries.delete_many({"_id": {"$gte": beyond[0]["_id"], "$lt": f"{key}0"}})

    def deliveries_page(self, key, request):
        """A page of the webhook's delivery log, newest first."""
        return pages.walk(self.deliveries, request, _delivery_to_api,
                          lower=f"{key}/", upper=f"{key}0")


def _delivery_to_api(doc):
    return Record({k: v for k, v in doc.items() if k not in ("_id", "webhook")})
