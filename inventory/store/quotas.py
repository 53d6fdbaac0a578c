"""Quotas per organization: how many platforms, clusters and tokens it may hold.

Counting without transactions
-----------------------------
Each organization document counts what it holds (`_used.<kind>`), and its
quota is `quotas.<kind>` (absent: the deployment's default). Creates and
deletes keep the count with atomic single-document writes only:

The design, and why: docs/design/quotas.md"""
from datetime import datetime, timedelta, timezone

from inventory.core.errors import Contended, QuotaExceeded

LEASE = timedelta(seconds=60)
USED, RESERVING, COUNTED = "_used", "_reserving", "_counted"
RESERVE_TRIES = 20  # a reservation whose organization keeps changing gives up (Contended)
RECOUNT_TRIES = 20  # a recount racing creates and deletes starts again, this often at most


def _now():
    """Naive UTC, as pymongo reads it, to the millisecond, as BSON keeps it
    (so that a reservation read back matches itself)."""
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


class Quotas:
    """The counts and reservations kept on organization documents."""

    def __init__(self, organizations, defaults):
        self.organizations = organizations  # the organizations' collection
        self.defaults = defaults  # {kind: quota of an organization that sets none}
        self.children = {}  # {kind: the collection of its records}, set by Store

    def fresh(self):
        """The fields of a new organization: counted from birth, holding nothing."""
        return {USED: dict.fromkeys(self.kinds, 0), COUNTED: True}

    @property
    def kinds(self):
        """The quota kinds, as the resources' specs declare them (with their defaults)."""
        return tuple(self.defaults)

    def limit(self, doc, kind):
        return (doc.get("quotas") or {}).get(kind, self.defaults[kind])

    def effective(self, doc):
        """{kind: quota} of an organization document."""
        return {kind: self.limit(doc, kind) for kind in self.kinds}

    def _still_below_quota(self, doc, kind):
        """The filter that holds while the organization read as `doc` is
        below its `kind` quota: its quota as read, its count below it. Plain
        comparisons, not `$expr` (FerretDB refuses `$expr`'s `$lt`), so the
        quota is read first and the write is conditional on it."""
        quota = (doc.get("quotas") or {}).get(kind)
        return {f"quotas.{kind}": {"$exists": False} if quota is None else quota,
                f"{USED}.{kind}": {"$not": {"$gte": self.limit(doc, kind)}}}

    def reserve(self, org_id, kind, child_id, identity):
        """Count one more `kind` for the organization, reserved for the child
        `child_id` (found by `identity`); QuotaExceeded when it is full;
        False when the organization is gone or being deleted."""
        healed = False
        for _ in range(RESERVE_TRIES):
            doc = self.organizations.find_one({"_id": org_id})
            if doc is None or doc.get("_deleting"):
                return False
            used, limit = (doc.get(USED) or {}).get(kind, 0), self.limit(doc, kind)
            if used >= limit:
                if not healed and self.heal(doc, kind):
                    healed = True
                    continue
                raise QuotaExceeded(kind, used, limit)
            reserved = self.organizations.update_one(
                {"_id": org_id, "_deleting": {"$exists": False},
                 **self._still_below_quota(doc, kind)},
                {"$inc": {f"{USED}.{kind}": 1},
                 "$set": {f"{RESERVING}.{kind}.{child_id}": {"at": _now(), "identity": identity}}})
            if reserved.matched_count:
                return True
            # filled, deleted or its quota changed since it was read: read again
        raise Contended("The organization's quota is changing; retry in a moment.")

    def settle(self, org_id, kind, child_id):
        """The reserved child is inserted: it is counted from now on. False
        when the reservation is gone (healed: this request outlived its lease)."""
        return self.organizations.update_one(
            {"_id": org_id, f"{RESERVING}.{kind}.{child_id}": {"$exists": True}},
            {"$unset": {f"{RESERVING}.{kind}.{child_id}": ""}}).matched_count == 1

    def release(self, org_id, kind, child_id):
        """The reserved child was not inserted: count one less (once)."""
        self.organizations.update_one(
            {"_id": org_id, f"{RESERVING}.{kind}.{child_id}": {"$exists": True}},
            {"$unset": {f"{RESERVING}.{kind}.{child_id}": ""}, "$inc": {f"{USED}.{kind}": -1}})

    def freed(self, org_id, kind, count):
        """`count` records of `kind` were deleted."""
        if count:
            self.organizations.update_one({"_id": org_id}, {"$inc": {f"{USED}.{kind}": -count}})

    def heal(self, doc, kind):
        """Release the reservations older than LEASE whose child was never
        inserted; whether any was."""
        stale = _now() - LEASE
        healed = False
        for child_id, reservation in ((doc.get(RESERVING) or {}).get(kind) or {}).items():
            if reservation["at"] < stale and \
                    self.children[kind].find_one(reservation["identity"], {"_id": 1}) is None:
                before = self.organizations.update_one(
                    {"_id": doc["_id"], f"{RESERVING}.{kind}.{child_id}.at": reservation["at"]},
                    {"$unset": {f"{RESERVING}.{kind}.{child_id}": ""},
                     "$inc": {f"{USED}.{kind}": -1}})
                healed = healed or before.matched_count == 1
        return healed

    def count_uncounted(self):
        """Recount every organization not counted yet (see the module's
        docstring); how many were."""
        return sum(self.recount(doc["_id"]) for doc in self.organizations.find(
            {COUNTED: {"$exists": False}}, {"_id": 1}))

    def recount(self, org_id):
        """Set the organization's counts to what it holds; whether it was
        recounted (False: it is gone or already counted)."""
        for _ in range(RECOUNT_TRIES):
            doc = self.organizations.find_one({"_id": org_id})
            if doc is None or doc.get(COUNTED):
                return False
            read = doc.get(USED) or {}
            counts = {}
            for kind in self.kinds:
                reserved = ((doc.get(RESERVING) or {}).get(kind) or {}).values()
                pending = sum(self.children[kind].find_one(reservation["identity"], {"_id": 1})
                              is None for reservation in reserved)
                counts[kind] = pending + self.children[kind].count_documents(
                    {"organization": org_id})
            unchanged = {f"{USED}.{kind}": read[kind] if kind in read else {"$exists": False}
                         for kind in self.kinds}
            if self.organizations.update_one(
                    {"_id": org_id, COUNTED: {"$exists": False}, **unchanged},
                    {"$set": {**{f"{USED}.{kind}": n for kind, n in counts.items()},
                              COUNTED: True}}).matched_count:
                return True
        raise RuntimeError(f"organization {org_id}: its counts kept changing while recounted "
                           f"({RECOUNT_TRIES} tries); run create-indexes again")
