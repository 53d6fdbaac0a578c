"""The resources found from their folders (inventory/resources/__init__.py)
and what is derived from their declarations."""
import pathlib

from inventory import resources

FOLDER = pathlib.Path(resources.__file__).parent


def test_every_folder_is_found_with_parents_before_children():
    folders = {path.parent.name for path in FOLDER.glob("*/spec.py")}
    assert {spec.name for spec in resources.SPECS} == folders
    names = [spec.name for spec in resources.SPECS]
    for spec in resources.SPECS:
        if spec.parent:
            assert names.index(spec.parent) < names.index(spec.name), spec.name


def test_children_refuse_their_parents_unforced_delete_unless_declared_not_to():
    by_name = {spec.name: spec for spec in resources.SPECS}
    for spec in resources.SPECS:
        refusing = [child.name for child in resources.SPECS
                    if child.parent == spec.name and child.refuses_parent_delete]
        assert resources.children_refuse(spec) is bool(refusing), spec.name
    assert resources.children_refuse(by_name["platforms"])  # its clusters refuse
    assert not by_name["scans"].refuses_parent_delete  # deleted with their cluster
    assert not resources.children_refuse(by_name["clusters"])
    assert not resources.children_refuse(by_name["events"])  # no children


def test_every_event_type_and_store_and_blueprint_is_derived():
    assert "kubecluster.created" in resources.event_types()
    assert len(resources.event_types()) == len(set(resources.event_types()))
    pairs = resources.store_classes()
    assert all(store_class.spec is spec for spec, store_class in pairs)
    assert {spec.name for spec, _ in pairs} >= {"clusters", "scans", "organizations"}
    assert len(resources.blueprints()) == len(resources.SPECS)
