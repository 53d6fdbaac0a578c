"""What a resource declares (inventory/core/spec.py): the declaration's own
checks, its event types, path keys, and the specs ordered parents first."""
import re

import pytest

from inventory.core.spec import PathKey, ResourceSpec, ordered


def test_a_parent_and_its_field_are_declared_together():
    with pytest.raises(ValueError, match="declared together"):
        ResourceSpec("scans", "scan", parent="clusters")
    with pytest.raises(ValueError, match="parent_holds"):
        ResourceSpec("scans", "scan", parent="clusters", parent_field="cluster",
                     parent_holds="name")
    with pytest.raises(ValueError, match="only a child"):
        ResourceSpec("clusters", "cluster", nested=True)


def test_event_types_are_the_kind_and_each_action():
    spec = ResourceSpec("clusters", "cluster", event_kind="kubecluster")
    assert spec.event_types == ("kubecluster.created", "kubecluster.updated",
                                "kubecluster.deleted")
    assert ResourceSpec("sessions", "session").event_types == ()


def test_a_path_key_matches_any_of_its_patterns():
    key = PathKey("cluster", "a name or id", "a name", (re.compile(r"^[a-z]+$"),
                                                        re.compile(r"^c_[0-9]+$")), 10)
    assert key.matches("prod") and key.matches("c_12")
    assert not key.matches("Prod") and not key.matches("c_x")


def _spec(name, parent=None):
    return ResourceSpec(name, name, parent=parent, parent_field=parent and "parent")


def test_parents_come_before_their_children_whatever_the_order_given():
    specs = [_spec("scans", "clusters"), _spec("clusters", "platforms"), _spec("orgs"),
             _spec("platforms", "orgs")]
    names = [spec.name for spec in ordered(specs)]
    assert names.index("orgs") < names.index("platforms") < names.index("clusters") \
        < names.index("scans")
    assert sorted(names) == sorted(spec.name for spec in specs)


def test_a_cycle_of_parents_is_refused():
    with pytest.raises(RuntimeError, match="cycle"):
        ordered([_spec("a", "b"), _spec("b", "a")])
