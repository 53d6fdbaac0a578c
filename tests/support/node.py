"""Node.js tools for the tests that run what JavaScript users run (typed
clients, linters): the pinned npm packages of tests/typescript/package.json,
installed once into .venv/typed-client (`tools`, a fixture); skipped, saying
why, where Node.js or the npm registry is missing."""
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests" / "typescript"
WORK = ROOT / ".venv" / "typed-client"
NODE, NPM = shutil.which("node"), shutil.which("npm")


def run_in_work(*command, timeout=300):
    result = subprocess.run(command, cwd=WORK, capture_output=True, text=True, timeout=timeout)
    return result.returncode, result.stdout + result.stderr


@pytest.fixture(scope="module")
def tools():
    """WORK with the pinned npm packages installed (once per package.json)."""
    if NODE is None or NPM is None:
        pytest.skip("no Node.js/npm on this machine: the typed-client checks need them")
    WORK.mkdir(parents=True, exist_ok=True)
    wanted = (SOURCES / "package.json").read_text()
    stamp = WORK / ".installed-package.json"
    if not stamp.exists() or stamp.read_text() != wanted:
        (WORK / "package.json").write_text(wanted)
        code, output = run_in_work(NPM, "install", "--no-audit", "--no-fund", "--loglevel=error",
                            timeout=900)
        if code != 0:
            pytest.skip(f"the npm packages could not be installed here:\n{output[-2000:]}")
        stamp.write_text(wanted)
    for name in ("session.ts", "tsconfig.json"):
        shutil.copy(SOURCES / name, WORK / name)
    return WORK
