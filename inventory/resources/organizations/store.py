"""Organizations: quotas, and the tokens scoped to them go with them."""

from inventory.core.errors import (
    InvalidReference,
    NotAllowed,
)
from inventory.core.ids import new_id
from inventory.resources.organizations.spec import SPEC
from inventory.store.base import ResourceStore


class OrganizationStore(ResourceStore):
    spec = SPEC
    key_field = "id"
    scope_field = "_id"

    def to_api(self, doc):
        record = super().to_api(doc)
        record["quotas"] = self.quotas.effective(doc)
        return record

    def create(self, body, principal, scope=None):
        if scope is not None:
            raise NotAllowed("A token scoped to one organization cannot create organizations.")
        doc = {"_id": new_id("org"), **body, **self.audit_new(principal), **self.quotas.fresh()}
        self.insert(doc)
        return self.to_api(doc)

    def owner(self, doc, parent=None):
        return doc["_id"]

    def update(self, key, changes, principal, scope=None, revisions=None):
        if "quotas" in changes and scope is not None:
            raise NotAllowed("Only an admin not scoped to an organization may change its quotas.")
        return super().update(key, changes, principal, scope, revisions)

    def live_parent(self, org, scope=None):
        """The stored organization a new record will belong to, or a 422 at
        `body.organization`."""
        doc = self.find_doc(org, scope)
        if doc is None:
            raise InvalidReference("organization", "No such organization.", org)
        return doc
