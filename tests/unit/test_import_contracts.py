"""The layering rule lives in pyproject.toml as import-linter contracts
(`lint-imports`, run by scripts/test before the tests). This checks that the
contracts keep covering the tree: a new module of `inventory` must be given
its layer, or nothing would stop it importing upwards."""
import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_every_module_of_inventory_has_a_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    named = {name.strip() for layer in layers
             for name in layer.replace("|", ":").split(":")}
    modules = {f"inventory.{path.stem}" for path in (ROOT / "inventory").glob("*.py")}
    modules |= {f"inventory.{path.parent.name}"
                for path in (ROOT / "inventory").glob("*/__init__.py")}
    assert modules - named == set(), "give these modules a layer in pyproject.toml"
