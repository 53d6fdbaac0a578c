"""Webhooks: subscriptions to the feed, each a reader that resumes from the
last event its receiver acknowledged, delivered under a lease in the store
(one deliverer per webhook across workers and instances); and their delivery
log. The deliverer is inventory/integrations/webhooks.py."""
import base64
import secrets
from datetime import datetime, timedelta, timezone

from pymongo import ReturnDocument

from inventory.core.caps import WEBHOOK_BACKOFF, WEBHOOK_DELIVERY_LOG, WEBHOOK_GIVE_UP, WEBHOOK_LEASE
from inventory.core.ids import new_id, now_rfc3339
from inventory.resources.webhooks.spec import SECRET_PREFIX, SPEC
from inventory.store import pages
from inventory.store.base import LIVE, Record, ResourceStore
from inventory.store.events import ID_PREFIX as EVENT_ID_PREFIX

EPOCH = datetime(1970, 1, 1)
_NEVER_MS = 10 ** 13  # the log's keys count down from here: newest first in key order


def _now():
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)  # BSON's precision


class WebhookStore(ResourceStore):
    spec = SPEC
    key_field = "id"
    scope_field = "organization"
    immutable_fields = ("organization",)

    def configure(self, settings):
        self.deliveries = self.collection.database["webhook_deliveries"]
        self.lease = timedelta(seconds=settings.get("webhook_lease", WEBHOOK_LEASE))

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
               "_lease_owner": None, "_lease_until": EPOCH}
        self.insert_in_organization(doc, org)
        return self.to_api(doc), secret

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
        return super().update(key, changes, principal, scope, revisions)

    def _remove_marked(self, docs):
        super()._remove_marked(docs)
        for doc in docs:  # its deliveries' log goes with it
            key = doc["_id"]
            self.deliveries.delete_many({"_id": {"$gt": f"{key}/", "$lt": f"{key}0"}})

    # -- delivery (under a lease) -----------------------------------------------

    def due(self, head):
        """The active webhooks with events after their position (before `head`,
        the feed's newest slot) whose next attempt is due and lease free."""
        now = _now()
        return self.collection.find(
            {"active": True, "_next_attempt_at": {"$lte": now}, "_lease_until": {"$lt": now},
             "_position": {"$lt": head}, **LIVE}, {"_id": 1, "organization": 1})

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
        return self.collection.update_one({"_id": key, "_lease_owner": owner},
                                          {"$set": fields}).matched_count == 1

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

    def release(self, key, owner):
        self.collection.update_one({"_id": key, "_lease_owner": owner},
                                   {"$set": {"_lease_owner": None, "_lease_until": EPOCH}})

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
