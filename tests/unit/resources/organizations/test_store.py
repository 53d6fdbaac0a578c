"""The organizations' store (inventory/resources/organizations/store.py): a
record shows its effective quotas; a caller scoped to an organization can
neither create organizations nor change quotas; a child's organization must
be live (InvalidReference otherwise)."""
import pytest

from inventory.core.caps import DEFAULT_QUOTAS
from inventory.core.errors import InvalidReference, NotAllowed

KIND = next(iter(DEFAULT_QUOTAS))


@pytest.fixture
def org(store):
    return store.organizations.create({"title": "Acme", "description": ""}, "tester")


def test_a_record_shows_every_quota_kind_with_its_default_until_one_is_set(store, org):
    assert org["quotas"] == DEFAULT_QUOTAS
    changed = store.organizations.update(org["id"], {"quotas": {KIND: 7}}, "admin")
    assert changed["quotas"] == {**DEFAULT_QUOTAS, KIND: 7}
    assert store.organizations.get(org["id"])["quotas"][KIND] == 7


def test_a_scoped_caller_cannot_create_an_organization_and_nothing_is_written(store, org):
    before = store.organizations.collection.count_documents({})
    with pytest.raises(NotAllowed):
        store.organizations.create({"title": "Other", "description": ""}, "t", scope=org["id"])
    assert store.organizations.collection.count_documents({}) == before


def test_only_an_unscoped_caller_changes_quotas(store, org):
    with pytest.raises(NotAllowed):
        store.organizations.update(org["id"], {"quotas": {KIND: 1}}, "t", scope=org["id"])
    assert store.organizations.get(org["id"])["quotas"][KIND] == DEFAULT_QUOTAS[KIND]
    # a scoped caller may still change the rest of its organization
    assert store.organizations.update(org["id"], {"title": "Acme 2"}, "t",
                                      scope=org["id"])["title"] == "Acme 2"


def test_a_live_parent_is_the_stored_organization_or_an_invalid_reference(store, org):
    assert store.organizations.live_parent(org["id"])["_id"] == org["id"]
    with pytest.raises(InvalidReference) as missing:
        store.organizations.live_parent("org_" + "0" * 32)
    assert missing.value.field == "organization"
    # outside the caller's scope it is not there either
    other = store.organizations.create({"title": "Other", "description": ""}, "tester")
    with pytest.raises(InvalidReference):
        store.organizations.live_parent(other["id"], scope=org["id"])
    store.organizations.delete(org["id"])
    with pytest.raises(InvalidReference):
        store.organizations.live_parent(org["id"])


def test_an_organization_owns_itself(store, org):
    """Its records' owner is the organization itself (what scope and quotas key on)."""
    doc = store.organizations.find_doc(org["id"])
    assert store.organizations.owner(doc) == org["id"]
