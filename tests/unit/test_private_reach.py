"""Tests reach no private attribute of another object (issue 46): `obj._x`,
`from module import _x`, `getattr(obj, "_x")`, `monkeypatch.setattr(obj,
"_x", ...)`, outside `self` and `cls`. A test that must (a clock with no
setting, a library's state no public call shows) goes through a fixture in
tests/conftest.py or its folder's conftest.py whose docstring says why, on
a line beginning `Private:`; a rename inside the code then breaks one
fixture, named, not tests here and there."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
# Files where no fixture can run, with the reason.
NO_FIXTURE = {
    "tests/support/emfile_listener.py": "a script that tests/system/test_serving.py runs in a "
                                        "process of its own, to serve worker._Listener alone",
}
REASON = "Private:"


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def private_reaches(tree):
    """(line, text) of each private reach in `tree`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr) and not (
                isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
            yield node.lineno, ast.unparse(node)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if _private(alias.name):
                    yield node.lineno, f"from {node.module} import {alias.name}"
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and (
                isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                and _private(node.args[1].value)) and (
                ast.unparse(node.func).split(".")[-1] in ("getattr", "setattr", "hasattr",
                                                          "delattr")):
            yield node.lineno, ast.unparse(node)


def _is_fixture(function):
    return any("fixture" in ast.unparse(decorator) for decorator in function.decorator_list)


def allowed_lines(path, tree):
    """The lines of the fixtures of a conftest.py that say why they reach."""
    if path.name != "conftest.py":
        return set()
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_fixture(node) \
                and REASON in (ast.get_docstring(node) or ""):
            lines |= set(range(node.lineno, node.end_lineno + 1))
    return lines


def reaches_outside_fixtures():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        relative = str(path.relative_to(ROOT))
        if relative in NO_FIXTURE or "node_modules" in path.parts:
            continue
        tree = ast.parse(path.read_text())
        allowed = allowed_lines(path, tree)
        found += [f"{relative}:{line}: {text}" for line, text in private_reaches(tree)
                  if line not in allowed]
    return found


def test_the_search_finds_each_form_of_reach(tmp_path):
    source = ("import pytest\nfrom m import _hidden, shown\n\n\nclass A:\n"
              "    def f(self, other):\n        return self._own, other._theirs\n\n\n"
              "def test(monkeypatch, thing):\n    monkeypatch.setattr(thing, '_clock', 1)\n"
              "    getattr(thing, '__class__')\n    return getattr(thing, '_x')\n")
    texts = [text for _, text in private_reaches(ast.parse(source))]
    assert sorted(texts) == sorted(["from m import _hidden", "other._theirs",
                                    "monkeypatch.setattr(thing, '_clock', 1)",
                                    "getattr(thing, '_x')"])


def test_only_a_conftest_fixture_that_says_why_may_reach(tmp_path):
    source = ('import pytest\n\n\n@pytest.fixture\ndef clock(thing):\n'
              '    """The clock.\n\n    Private: no setting moves it."""\n'
              '    return thing._clock\n\n\n@pytest.fixture\ndef quiet(thing):\n'
              '    return thing._clock\n')
    tree = ast.parse(source)
    conftest = tmp_path / "conftest.py"
    reached = [line for line, _ in private_reaches(tree)
               if line not in allowed_lines(conftest, tree)]
    assert reached == [14]  # the fixture that does not say why
    assert allowed_lines(tmp_path / "test_x.py", tree) == set()  # a test module's own: no


def test_no_test_reaches_a_private_attribute_outside_such_a_fixture():
    found = reaches_outside_fixtures()
    assert found == [], ("reach these through a conftest fixture whose docstring says why "
                         f"(`{REASON} ...`), or by a public way:\n" + "\n".join(found))
