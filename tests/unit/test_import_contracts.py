"""The layering rule lives in pyproject.toml as import-linter contracts
(`lint-imports`, run by scripts/test before the tests). These check that the
contracts keep covering the tree: a new folder or loose module of
`inventory` must be given its layer, and a resource folder keeps the same
file names, so that the wildcard contracts on `inventory.resources.*`
cover it."""
import pathlib
import tomllib

from inventory import resources

ROOT = pathlib.Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventory"
RESOURCE_FILES = {"__init__.py", "spec.py", "store.py", "views.py"}
# A resource's own rules, pure functions of the core (pyproject.toml holds
# them to it): its store and schema use them.
RULES_FILES = {"readiness.py"}


def _layered():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
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
    for spec in resources.SPECS:
        folder = INVENTORY / "resources" / spec.name
        names = {path.name for path in folder.glob("*.py")}
        assert names <= RESOURCE_FILES | RULES_FILES and {"__init__.py", "spec.py", "views.py"} <= names, \
            f"{folder}: a resource folder holds {sorted(RESOURCE_FILES)} only"
        assert (ROOT / "schemas" / f"{spec.name}.py").exists(), \
            f"schemas/{spec.name}.py: each resource has its schema module, named as its folder"
