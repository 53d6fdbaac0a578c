"""The manual in docs/ builds with mkdocs --strict (a broken link, a page
left out of the nav, a bad anchor fail it), and the README is a front door:
at most 300 lines, linking into docs/ to pages that exist."""
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
