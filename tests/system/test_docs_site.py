"""The manual in docs/ builds with mkdocs --strict (a broken link, a page
left out of the nav, a bad anchor fail it), its generated tables are what
the code makes (scripts/docs-tables), and the README's `scripts/docs` runs.
(Its prose is not read for wording here: the examples the docs give are
executed, tests/api/test_readme_session.py, test_docs_examples.py.)"""
import importlib.util
import os
import pathlib
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


@pytest.mark.slow
def test_the_readmes_docs_command_runs_from_the_checkout():
    """`scripts/docs` (the README's) installs the docs' requirements and
    starts mkdocs: here, as far as its help."""
    ran = subprocess.run([str(ROOT / "scripts" / "docs"), "--help"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0 and "Usage: mkdocs serve" in ran.stdout, ran.stdout + ran.stderr
