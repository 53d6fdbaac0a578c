"""The README's example session, read from the README itself and run
request by request, with every request and every answer checked against the
OpenAPI document (as a validating proxy would): the front door tells the truth."""
import datetime
import json
import pathlib
import re
import shlex
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest
import time_machine

from inventory.core import lifecycle
from tests.support.openapi_document import Document

ROOT = pathlib.Path(__file__).resolve().parents[2]


def readme_session():
    """The `api ...` commands of the README's session, one string each."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## An example session", 1)[1]
    block = section.split("```sh", 1)[1].split("```", 1)[0]
    commands, current = [], ""
    for line in block.splitlines():
        line = re.sub(r"\s+#.*$", "", line) if current == "" else line  # trailing comments
        if not current and not re.match(r"^(ORG=\$\()?api ", line.strip()):
            continue
        current += ("\n" if current else "") + line
        try:
            shlex.split(current.split("|")[0])  # complete once its quotes close
        except ValueError:
            continue
        commands.append(current.split("|")[0].removeprefix("ORG=$(").strip())
        current = ""
    return commands


def to_request(command, variables):
    """(method, path with query, body bytes or None) of one `api` command."""
    for name, value in variables.items():
        command = command.replace(f"${name}", value)
    words = shlex.split(command)[1:]
    method, body, url, get_params = "GET", None, None, None
    while words:
        word = words.pop(0)
        if word == "-X":
            method = words.pop(0)
        elif word == "-d":
            body = words.pop(0).encode()
            method = "POST" if method == "GET" else method
        elif word == "-G":
            get_params = []
        elif word == "--data-urlencode":
            get_params.append(tuple(words.pop(0).split("=", 1)))
        elif word == "-i":
            continue
        else:
            url = word
    parts = urlsplit(url)
    query = parse_qsl(parts.query) + (get_params or [])
    return method, parts.path + (f"?{urlencode(query)}" if query else ""), body


# The README's session holds whatever the day: it runs today and a year on
# (the service's clock moved as the support tests move it), and what its
# comments say it finds, it finds on both days.
A_YEAR = datetime.timedelta(days=365)


@pytest.mark.parametrize("later", [datetime.timedelta(0), A_YEAR], ids=["today", "a-year-on"])
def test_the_readmes_session_runs_and_every_request_and_answer_is_documented(client, later):
    day = datetime.datetime.now(datetime.timezone.utc) + later
    with time_machine.travel(day, tick=True):
        answers = _run_the_session(client)
    assert lifecycle.today() == datetime.datetime.now(datetime.timezone.utc).date()  # let go
    fleet = next(answer for command, answer in answers
                 if "support.all_ends_on" in command and "filter=" in command)
    assert [c["name"] for c in fleet["results"]] == ["payments"], fleet
    created = next(answer for command, answer in answers
                   if command.startswith("api -X POST $B/kubeclusters -d")
                   and answer.get("name") == "payments")
    assert created["support"]["status"] != "unsupported", (day, created["support"])


def _run_the_session(client):
    """Runs every command, checking it against the document: [(command, answer JSON)]."""
    answers = []
    document = Document(client.get("/openapi.json").get_json())
    commands = readme_session()
    assert len(commands) >= 12, commands
    variables, last_continue = {"B": "http://localhost"}, ""
    for command in commands:
        command = command.replace("<the previous page's pagination.continue>", last_continue)
        method, path, body = to_request(command, variables)
        entry = document.operation(method, urlsplit(path).path)
        if body is not None:
            request_schema = entry["requestBody"]["content"]["application/json"]["schema"]
            document.check(json.loads(body), request_schema, f"request of {command}")
        else:
            assert not entry.get("requestBody", {}).get("required"), command
        for name, value in parse_qsl(urlsplit(path).query):
            parameter = next(p for p in entry["parameters"] if p["name"] == name)
            kind = parameter["schema"].get("type")
            typed = (int(value) if kind == "integer"
                     else {"true": True, "false": False}.get(value, value) if kind == "boolean"
                     else value)  # as a validating proxy reads a query string
            document.check(typed, parameter["schema"], f"{name} of {command}")
        answer = client.open(path, method=method, data=body,
                             content_type="application/json" if body else None)
        assert 200 <= answer.status_code < 300, (command, answer.get_json())
        documented = document.response(entry, answer.status_code)
        for header in documented.get("headers", {}):
            # only on replays; the rate headers go to every caller but the
            # bootstrap admin, whose token the session uses; CORS's only to
            # a browser page's allowed Origin
            assert header in answer.headers or header in (
                "Idempotent-Replayed", "RateLimit", "RateLimit-Policy",
                "Access-Control-Allow-Origin"), (command, header)
        if answer.data:
            schema = documented["content"][answer.mimetype]["schema"]
            document.check(answer.get_json(), schema, f"answer to {command}")
            answers.append((command, answer.get_json()))
            if "pagination" in answer.get_json():
                last_continue = answer.get_json()["pagination"]["continue"]
            if command.startswith("api -X POST $B/organizations") or (
                    "organizations" in path and method == "POST"):
                variables["ORG"] = answer.get_json()["id"]
        else:
            assert answer.status_code == 204 and "content" not in documented, command
    return answers


def test_the_session_parser_reads_what_the_readme_says():
    commands = readme_session()
    assert commands[0].startswith("api -X POST $B/organizations")
    assert any("--data-urlencode" in c for c in commands)
    method, path, body = to_request(commands[1], {"B": "http://h", "ORG": "org_x"})
    assert method == "POST" and path == "/kubeplatforms"
    assert json.loads(body)["organization"] == "org_x"


@pytest.mark.parametrize("value, ok", [({"title": "A"}, True), ({"title": 5}, False),
                                       ({"title": "A", "color": "red"}, False)])
def test_the_validator_is_a_real_one(client, value, ok):
    document = Document(client.get("/openapi.json").get_json())
    schema = {"$ref": "#/components/schemas/OrganizationCreate"}
    if ok:
        document.check(value, schema, "x")
    else:
        with pytest.raises(AssertionError):
            document.check(value, schema, "x")
