"""Typed clients and linters as real users run them, on the live document:
a TypeScript client generated with openapi-typescript runs the README's
session with openapi-fetch and compiles under `tsc --strict` with no casts
and no non-null assertions; Spectral's `spectral:oas` rules report no error.

They need Node.js and the npm registry; the packages (tests/typescript/
package.json, pinned) are installed once into .venv/typed-client. Where
either is missing the tests are skipped, saying why.
"""
import json
import re

import pytest

from tests.conftest import ADMIN_TOKEN
from tests.support.node import NODE, SOURCES, run_in_work  # tools: a fixture (conftest)

pytestmark = pytest.mark.slow

@pytest.fixture
def document(client, tools):
    path = tools / "openapi.json"
    path.write_bytes(client.get("/openapi.json").data)
    return path


def test_the_session_has_no_casts_and_no_non_null_assertions():
    code = re.sub(r"//.*", "", (SOURCES / "session.ts").read_text())
    assert not re.search(r"\bas\s+[A-Za-z{(\[]", code), "a cast"
    assert not re.search(r"[\w\)\]]!(?!=)", code), "a non-null assertion"
    assert "any" not in re.findall(r"\b\w+\b", code), "an any"


def test_a_typescript_client_compiles_strictly_and_runs_the_readmes_session(
        tools, document, base_url):
    code, output = run_in_work("node_modules/.bin/openapi-typescript", str(document),
                        "-o", "schema.d.ts")
    assert code == 0, output
    code, output = run_in_work("node_modules/.bin/tsc", "-p", "tsconfig.json")
    assert code == 0, output  # tsc --strict: no type error
    code, output = run_in_work(NODE, "build/session.js", base_url, ADMIN_TOKEN)
    assert code == 0 and "the README's session ran" in output, output


def test_spectral_oas_rules_report_no_error(tools, document):
    (tools / ".spectral.yaml").write_text('extends: ["spectral:oas"]\n')
    code, output = run_in_work("node_modules/.bin/spectral", "lint", str(document), "--ruleset",
                        ".spectral.yaml", "--fail-severity", "error", "--format", "json",
                        timeout=600)
    start = output.find("[")
    findings = json.loads(output[start:]) if start >= 0 else []
    errors = [f for f in findings if f.get("severity") == 0]
    print(f"\nspectral: {len(findings)} findings, {len(errors)} errors")
    for finding in findings[:20]:
        print(" ", finding.get("code"), ".".join(map(str, finding.get("path", []))),
              finding.get("message"))
    assert code == 0 and errors == [], errors[:10]
