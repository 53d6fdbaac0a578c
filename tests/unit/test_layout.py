"""tests/unit mirrors the code module by module (issue 46): each module of
inventory/ and schemas/ with logic of its own has its test file, where a
newcomer looks for it.

    inventory/PKG/MOD.py       -> tests/unit/PKG/test_MOD.py
    inventory/PKG/__init__.py  -> tests/unit/PKG/test_init.py
    inventory/MOD.py           -> tests/unit/test_MOD.py
    schemas/MOD.py             -> tests/unit/schemas/test_MOD.py

An aspect of a module may have a file of its own beside the mirror
(`test_MOD_ASPECT.py`); the mirror is still there.

A module has logic of its own when one of its functions or methods has a
body beyond a declaration (a docstring, `pass`, `...`, `raise
NotImplementedError`): a module of constants, of marshmallow fields, of a
spec's declaration, has none, and is tested where it is read."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
UNIT = ROOT / "tests" / "unit"

# Modules with logic that have no mirror, each with the reason. Keep it short.
EXEMPT = {
    "inventory/embedded/mongomock_internals.py":
        "a library's private parts, pinned: tests/unit/test_private_internals.py checks them",
    **{f"inventory/resources/{name}/views.py":
       "a resource's views do HTTP: each operation is proven through Flask's test client in "
       "tests/api (test_<resource>.py), their declarations in tests/unit/http/test_operations.py"
       for name in ("clusters", "events", "organizations", "platforms", "rollouts", "scans",
                    "tokens", "webhooks")},
}


def _declaration_only(body):
    for statement in body:
        if isinstance(statement, ast.Pass) or (
                isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)):
            continue  # a docstring, `...`
        if isinstance(statement, ast.Raise) and "NotImplementedError" in ast.unparse(statement):
            continue
        return False
    return True


def has_logic(path):
    """Whether a function or method of the module at `path` does something."""
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
               and not _declaration_only(node.body)
               for node in ast.walk(ast.parse(path.read_text())))


def mirror(path):
    """The mirror test file of the module at `path` (relative to ROOT)."""
    parts = path.parts[1:] if path.parts[0] == "inventory" else path.parts
    folder = UNIT.joinpath(*parts[:-1])
    stem = "init" if path.stem == "__init__" else path.stem
    return folder / f"test_{stem}.py"


def modules_with_logic():
    paths = [*(ROOT / "inventory").rglob("*.py"), *(ROOT / "schemas").rglob("*.py")]
    return sorted(str(path.relative_to(ROOT)) for path in paths
                  if "__pycache__" not in path.parts and has_logic(path))


def test_the_logic_test_tells_logic_from_declarations(tmp_path):
    declared = tmp_path / "declared.py"
    declared.write_text('"""Doc."""\nLIMIT = 3\n\n\nclass Shape:\n    name = "x"\n\n'
                        '    def later(self):\n        """Doc."""\n        ...\n')
    acting = tmp_path / "acting.py"
    acting.write_text("def double(x):\n    return 2 * x\n")
    assert not has_logic(declared) and has_logic(acting)
    assert "inventory/core/ids.py" in modules_with_logic()  # the walk finds them
    assert "inventory/core/caps.py" not in modules_with_logic()


def test_the_mirror_of_a_module():
    assert mirror(pathlib.Path("inventory/core/ids.py")) == UNIT / "core" / "test_ids.py"
    assert mirror(pathlib.Path("inventory/resources/clusters/store.py")) == \
        UNIT / "resources" / "clusters" / "test_store.py"
    assert mirror(pathlib.Path("inventory/ui/__init__.py")) == UNIT / "ui" / "test_init.py"
    assert mirror(pathlib.Path("inventory/config.py")) == UNIT / "test_config.py"
    assert mirror(pathlib.Path("schemas/fields.py")) == UNIT / "schemas" / "test_fields.py"


def test_every_module_with_logic_has_its_mirror_test_file():
    missing = [f"{module} -> {mirror(pathlib.Path(module)).relative_to(ROOT)}"
               for module in modules_with_logic()
               if module not in EXEMPT
               and not mirror(pathlib.Path(module)).exists()]
    assert missing == [], "write these modules' tests (issue 46):\n" + "\n".join(missing)


def test_the_exemptions_name_only_modules_with_logic_and_no_mirror():
    """An entry whose module went, lost its logic or got its mirror goes."""
    logic = set(modules_with_logic())
    stale = sorted(module for module in EXEMPT
                   if module not in logic or mirror(pathlib.Path(module)).exists())
    assert stale == [], "remove these from EXEMPT"
    assert all(reason.strip() for reason in EXEMPT.values())


def test_every_folder_of_the_unit_tests_is_a_folder_of_the_code():
    """tests/unit/<folder>/ holds the tests of inventory/<folder>/ or of
    schemas/ (the top: of app.py, the loose modules and the whole house)."""
    folders = {path.parent.relative_to(UNIT) for path in UNIT.rglob("test_*.py")}
    folders |= {path.relative_to(UNIT) for path in UNIT.rglob("*")
                if path.is_dir() and path.name != "__pycache__"}
    assert pathlib.Path("core") in folders  # the walk finds them
    assert {str(folder) for folder in folders if folder != pathlib.Path(".")
            and not (ROOT / "inventory" / folder).is_dir()
            and folder.parts[0] != "schemas"} == set(), \
        "tests/unit/<folder> must be named as the folder of inventory/ whose modules it tests"
