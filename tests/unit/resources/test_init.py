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


def test_which_children_refuse_their_parents_unforced_delete_is_declared():
    """Declared on the child (a parent's DELETE takes `force` where one
    refuses: tests/unit/http/test_operations.py holds the views to it)."""
    by_name = {spec.name: spec for spec in resources.SPECS}
    assert by_name["clusters"].refuses_parent_delete  # a platform's clusters refuse
    assert not by_name["scans"].refuses_parent_delete  # deleted with their cluster
    assert not [spec.name for spec in resources.SPECS if spec.parent == "events"]  # no children


def test_every_event_type_and_store_and_blueprint_is_derived():
    assert "kubecluster.created" in resources.event_types()
    assert len(resources.event_types()) == len(set(resources.event_types()))
    pairs = resources.store_classes()
    assert all(store_class.spec is spec for spec, store_class in pairs)
    assert {spec.name for spec, _ in pairs} >= {"clusters", "scans", "organizations"}
    assert len(resources.blueprints()) == len(resources.SPECS)
