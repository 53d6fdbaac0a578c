"""The README's example session as a newcomer meets it: the shell block runs
verbatim (curl and jq, against a served app), and the responses it shows
have the shape the service really gives and the document describes."""
import datetime
import json
import pathlib
import re
import shutil
import subprocess

import pytest
import time_machine

from tests.conftest import ADMIN_TOKEN
from tests.support.openapi_document import Document

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _section():
    readme = (ROOT / "README.md").read_text()
    return readme.split("## An example session", 1)[1].split("\n## ", 1)[0]


def shown_responses():
    """{schema name: body} of the JSON blocks the section shows."""
    bodies = [json.loads(block) for block in re.findall(r"```json\n(.*?)```", _section(), re.S)]
    return {body["$schema"].rsplit("/", 1)[1].removesuffix(".json"): body for body in bodies}


def _shape(value):
    """The keys of every object in `value`, nested; a list by its first item."""
    if isinstance(value, dict):
        return {key: _shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value else []
    return type(value).__name__ if value is not None else None


def test_the_readme_shows_a_record_a_list_page_and_an_error():
    assert set(shown_responses()) == {"KubeCluster", "OrganizationList", "Error"}


def shown_on():
    """The day the README's record was read on: the day it was made (its
    `created_on`), which the README's prose names too."""
    record = shown_responses()["KubeCluster"]
    made = datetime.datetime.fromisoformat(record["created_on"].replace("Z", "+00:00"))
    return made.replace(hour=12, minute=0, second=0, microsecond=0)


def test_the_shown_responses_are_what_the_service_answers(client):
    with time_machine.travel(shown_on(), tick=True):
        _compare_the_shown_responses(client)


def _compare_the_shown_responses(client):
    document = Document(client.get("/openapi.json").get_json())
    shown = shown_responses()
    for name, body in shown.items():
        document.check(body, {"$ref": f"#/components/schemas/{name}"}, f"the README's {name}")
    org = client.post("/organizations", json={"title": "Acme Corp",
                                              "description": "Payments and ledgers."})
    client.post("/kubeplatforms", json={
        "name": "eks-prod", "organization": org.get_json()["id"], "title": "EKS production",
        "control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}})
    record = client.post("/kubeclusters", json={
        "name": "payments", "platform": "eks-prod", "environment": "production",
        "version": shown["KubeCluster"]["version"], "labels": {"team": "core"}}).get_json()
    client.post("/organizations", json={"title": "Second"})
    page = client.get("/organizations?limit=1").get_json()
    error = client.post("/kubeclusters", json={
        "name": "Payments!", "platform": "eks-prod", "environment": "production"}).get_json()
    assert _shape(shown["KubeCluster"]) == _shape(record)
    # on the day it shows, the record's computed parts are what it shows
    for part in ("support", "readiness", "version", "labels"):
        assert shown["KubeCluster"][part] == record[part], part
    assert _shape(shown["OrganizationList"]) == _shape(page)
    assert _shape(shown["Error"]) == _shape(error)
    assert [e["location"] for e in shown["Error"]["errors"]] == [
        e["location"] for e in error["errors"]]
    assert shown["Error"]["detail"] == error["detail"]


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq") and shutil.which("bash")),
                    reason="the README's session needs bash, curl and jq")
def test_the_readmes_shell_session_runs_verbatim(base_url):
    block = _section().split("```sh\n", 1)[1].split("```", 1)[0]
    # only the two placeholders change: where the service is, and its token
    script = block.replace("B=http://localhost:8000", f"B={base_url.rstrip('/')}", 1)
    script = script.replace("ADMIN=inv_...", f"ADMIN={ADMIN_TOKEN}", 1)
    assert script.count(base_url.rstrip("/")) == 1 and ADMIN_TOKEN in script
    result = subprocess.run(["bash", "-eu", "-o", "pipefail", "-c", script],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert lines.count("ledger") == 1 and lines.count("payments") == 1  # the paging loop
    assert lines.index("ledger") < lines.index("payments")
    assert result.stdout.count("HTTP/1.1 204") == 2, result.stdout[-2000:]
    for line in lines:  # every answer but the two deletes' heads is JSON
        if line.startswith("{"):
            assert "status" not in json.loads(line) or json.loads(line).get("status") == "ok", line
