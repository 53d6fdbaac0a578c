"""The import graph keeps each layer to its job: only the store knows
pymongo; the store, the filter and the domain errors know nothing of HTTP."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def imports_of(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module


def modules(*globs):
    return [path for pattern in globs for path in sorted(ROOT.glob(pattern))]


@pytest.mark.parametrize("path", modules("inventory/store/*.py", "inventory/errors.py",
                                         "inventory/filtering.py", "inventory/versions.py",
                                         "inventory/labels.py", "inventory/roles.py"),
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_the_data_layer_knows_nothing_of_http(path):
    bad = [name for name in imports_of(path)
           if name.split(".")[0] in ("flask", "werkzeug", "webargs", "flask_smorest")
           or name.startswith("inventory.api")]
    # the store's package module offers Flask's CLI command and app hookup
    if path.name == "__init__.py" and path.parent.name == "store":
        bad = [name for name in bad if name not in ("flask", "flask.cli")]
        assert "register_error_handler" not in path.read_text()
    assert bad == []


@pytest.mark.parametrize("path", [p for p in modules("inventory/**/*.py", "schemas/*.py", "app.py")
                                  if "store" not in p.parts],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_only_the_store_imports_pymongo(path):
    assert not [name for name in imports_of(path) if name.split(".")[0] == "pymongo"]
