"""KubePlatforms: a platform's provider never changes, so its clusters' copy of it never goes stale."""
import secrets

from inventory.core.errors import (
    ImmutableField,
    InvalidReference,
)
from inventory.resources.platforms.spec import SPEC
from inventory.store.base import ResourceStore


class PlatformStore(ResourceStore):
    spec = SPEC
    key_field = "name"
    scope_field = "organization"
    immutable_fields = ("name", "organization")
    organizations = None  # the parent collection, set by Store

    def create(self, body, principal, scope=None):
        org = self.organizations.live_parent(body["organization"], scope)
        # `_uid` tells this platform from a later one that takes its name
        doc = {"_id": body["name"], "_uid": secrets.token_hex(8),
               **{k: v for k, v in body.items() if k != "name"}, **self.audit_new(principal)}
        self.insert_under(doc, self.organizations, org, InvalidReference(
            "organization", "The organization was deleted meanwhile.", org["_id"]),
            org_id=org["_id"])
        return self.to_api(doc)

    def identity(self, doc):
        # a platform's name can be taken again once it is deleted
        return {"_id": doc["_id"], "_uid": doc.get("_uid")}

    def update(self, key, changes, principal, scope=None, revisions=None):
        # Its clusters keep a copy of the provider (which lifecycle they
        # follow, what summaries count them by): it never changes, so the
        # copy never goes stale (README, Decisions).
        provider = (changes.get("control_plane") or {}).get("provider")
        if provider is not None and provider != self.get_doc(key, scope)[
                "control_plane"]["provider"]:
            raise ImmutableField("control_plane.provider", self.kind, provider)
        return super().update(key, changes, principal, scope, revisions)

    def reservation_id(self, doc):
        return doc["_uid"]
