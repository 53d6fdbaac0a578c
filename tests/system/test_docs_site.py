"""The manual in docs/ builds with mkdocs --strict (a broken link, a page
left out of the nav, a bad anchor fail it), its generated tables are what
the code makes (scripts/docs-tables), and the README is a front door: at
most 300 lines, linking into docs/ to pages that exist."""
import ast
import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_docs_build_strictly(tmp_path):
    mkdocs = pathlib.Path(sys.executable).parent / "mkdocs"
    built = subprocess.run([str(mkdocs), "build", "--strict", "-d", str(tmp_path / "site")],
                           cwd=ROOT, capture_output=True, text=True, timeout=300,
                           env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert built.returncode == 0, built.stdout + built.stderr
    assert (tmp_path / "site" / "integrations" / "index.html").exists()


def _docs_tables():
    spec = importlib.util.spec_from_file_location("docs_tables", ROOT / "scripts" / "docs_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generated_tables_are_what_the_code_makes():
    """Each generated table (limits, settings, paths, list fields, group
    fields, event types) is current: run scripts/docs-tables when not."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("MONGODB_URI", "INVENTORY_DATA_DIR")}
    checked = subprocess.run([sys.executable, "scripts/docs_tables.py", "--check"], cwd=ROOT,
                             capture_output=True, text=True, timeout=300, env=env)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_stale_table_is_told_and_made_anew_between_its_markers():
    docs_tables = _docs_tables()
    begin, end = docs_tables.markers("event-types")
    stale = f"prose before\n{begin}\n| Record | Event types |\n|---|---|\n{end}\nprose after\n"
    made = docs_tables.rendered("event-types", stale)
    assert made != stale and "`kubecluster.updated`" in made
    assert made.startswith(f"prose before\n{begin}\n") and made.endswith(f"\n{end}\nprose after\n")
    assert docs_tables.rendered("event-types", made) == made
    for name, (page, _) in docs_tables.BLOCKS.items():  # every block has its place
        assert page.read_text().count(docs_tables.markers(name)[0]) == 1, name


def _code_constants():
    names = set()
    for path in [*(ROOT / "inventory").rglob("*.py"), *(ROOT / "schemas").rglob("*.py")]:
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            names |= {target.id for target in targets if isinstance(target, ast.Name)}
    return {name for name in names if name.isupper()}


def test_the_manual_names_only_settings_that_exist_and_sets_no_constant():
    """A `NAME` the manual gives is a setting (inventory/config.py), a
    constant of the code or one of the scripts' own variables; `NAME=value`
    only a setting or a script's variable: a constant written as a setting
    misleads."""
    from inventory.config import SETTINGS

    settings = {setting.name for setting in SETTINGS}
    constants = _code_constants()
    # scripts/docs's, the races', scripts/wire's, scripts/test's
    scripts_own = {"DOCS_PORT", "RACE_ROUNDS", "FEED_RACE_ROUNDS", "RACE_SERVINGS",
                   "MONGODB_URI", "FERRETDB_PORT", "TEST_WORKERS", "TEST_PORTS"}
    from inventory.agent.cli import ENVIRONMENT as AGENTS_OWN  # the scanning agent's

    settings |= set(AGENTS_OWN)
    cited = {"TRUSTED_HOSTS"}  # Flask's own, in decisions.md
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        text = page.read_text()
        for name in re.findall(r"`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`", text):
            assert name in settings | constants | cited | scripts_own, \
                f"{page.name}: `{name}` is no setting or constant"
        for name in re.findall(r"\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)=", text):
            assert name in settings | scripts_own, f"{page.name}: {name}= is no setting"
    assert "WEBHOOK_TIMEOUT" in constants - settings  # the constants are found, apart


def test_the_readme_is_a_front_door_whose_links_exist():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    links = re.findall(r"\]\((docs/[^)#]*)", readme)
    assert links, "the README links into docs/"
    for link in links:
        assert (ROOT / link).exists(), link


@pytest.mark.slow
def test_the_readmes_docs_command_runs_from_the_checkout():
    """`scripts/docs` (the README's) installs the docs' requirements and
    starts mkdocs: here, as far as its help."""
    readme = (ROOT / "README.md").read_text()
    assert "`scripts/docs`" in readme
    ran = subprocess.run([str(ROOT / "scripts" / "docs"), "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0 and "Usage: mkdocs serve" in ran.stdout, ran.stdout + ran.stderr
