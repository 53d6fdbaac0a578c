"""The layering rule lives in pyproject.toml as import-linter contracts
(`lint-imports`, run by scripts/test before the tests). These check that the
contracts keep covering the tree: a new folder or loose module of
`inventory` must be given its layer, and a resource folder keeps the same
file names, so that the wildcard contracts on `inventory.resources.*`
cover it. (tests/unit's mirror of the code: tests/unit/test_layout.py.)"""
import pathlib
import tomllib

from inventory import resources

ROOT = pathlib.Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventory"
RESOURCE_FILES = {"__init__.py", "spec.py", "store.py", "views.py"}


def _contracts():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
        "contracts"]


def _layered():
    # the house's layers (a package's own layers name their `containers`)
    (layers,) = [c["layers"] for c in _contracts()
                 if c["type"] == "layers" and "containers" not in c]
    return {name.strip() for layer in layers for name in layer.replace("|", ":").split(":")}


def test_every_folder_and_loose_module_of_inventory_has_a_layer():
    modules = {f"inventory.{path.stem}" for path in INVENTORY.glob("*.py")
               if path.name != "__init__.py"}
    modules |= {f"inventory.{path.parent.name}" for path in INVENTORY.glob("*/__init__.py")}
    # resources are layered file by file, by the wildcard contracts
    assert modules - _layered() - {"inventory.resources"} == set(), \
        "give these modules a layer in pyproject.toml"


def test_at_most_eight_modules_lie_loose_under_inventory():
    assert len(list(INVENTORY.glob("*.py"))) <= 8


def test_every_resource_folder_has_the_same_file_names():
    """spec, views and (with data) store; any other module is a part of
    its store, and the store's contract names it (so it is layered too)."""
    (store_contract,) = [c for c in _contracts() if c["name"].startswith("A resource's store")]
    for spec in resources.SPECS:
        folder = INVENTORY / "resources" / spec.name
        names = {path.name for path in folder.glob("*.py")}
        assert {"__init__.py", "spec.py", "views.py"} <= names, \
            f"{folder}: a resource folder holds {sorted(RESOURCE_FILES)}"
        for part in sorted(names - RESOURCE_FILES):
            module = f"inventory.resources.{spec.name}.{part.removesuffix('.py')}"
            assert "store.py" in names and module in store_contract["source_modules"], \
                f"{module}: a part of its resource's store, named in the store's contract"
        assert (ROOT / "schemas" / f"{spec.name}.py").exists(), \
            f"schemas/{spec.name}.py: each resource has its schema module, named as its folder"
