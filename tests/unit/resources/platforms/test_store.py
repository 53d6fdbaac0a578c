"""The platforms' store (inventory/resources/platforms/store.py): a platform
is made only under a live organization the caller may see; its provider
never changes (its clusters keep a copy of it); a name taken again is
another platform (its own `_uid`)."""
import pytest

from inventory.core.errors import ImmutableField, InvalidReference
from tests.support.stores import PLATFORM


@pytest.fixture
def org(store):
    return store.organizations.create({"title": "Acme", "description": ""}, "tester")


def _platform(store, org, name="p1", scope=None):
    return store.platforms.create({"name": name, "organization": org["id"], **PLATFORM},
                                  "tester", scope=scope)


def test_a_platform_is_made_under_its_organization(store, org):
    platform = _platform(store, org)
    assert (platform["name"], platform["organization"]) == ("p1", org["id"])
    assert store.platforms.get("p1")["control_plane"] == PLATFORM["control_plane"]


def test_a_platform_of_no_such_organization_is_refused_and_nothing_is_written(store, org):
    with pytest.raises(InvalidReference) as refused:
        store.platforms.create({"name": "p1", "organization": "org_missing", **PLATFORM}, "t")
    assert refused.value.field == "organization"
    assert store.platforms.find_doc("p1") is None


def test_a_scoped_caller_cannot_make_a_platform_in_another_organization(store, org):
    other = store.organizations.create({"title": "Other", "description": ""}, "tester")
    with pytest.raises(InvalidReference):
        _platform(store, other, scope=org["id"])
    assert store.platforms.find_doc("p1") is None
    assert _platform(store, org, scope=org["id"])["organization"] == org["id"]


def test_the_provider_never_changes_but_the_rest_of_the_control_plane_may(store, org):
    _platform(store, org)
    with pytest.raises(ImmutableField) as refused:
        store.platforms.update("p1", {"control_plane": {"provider": "gke"}}, "t")
    assert refused.value.field == "control_plane.provider"
    assert store.platforms.get("p1")["control_plane"]["provider"] == "eks"
    # the same provider again is no change of it
    same = store.platforms.update("p1", {"control_plane": {"provider": "eks",
                                                           "region": "eu-west-1"}}, "t")
    assert same["control_plane"] == {"provider": "eks", "region": "eu-west-1"}
    assert store.platforms.update("p1", {"description": "x"}, "t")["description"] == "x"


def test_a_name_taken_again_after_a_delete_is_another_platform(store, org):
    _platform(store, org)
    first = store.platforms.find_doc("p1")
    store.platforms.delete("p1")
    _platform(store, org)
    again = store.platforms.find_doc("p1")
    assert store.platforms.identity(first) != store.platforms.identity(again)
    assert store.platforms.reservation_id(first) != store.platforms.reservation_id(again)
