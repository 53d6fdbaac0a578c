"""Start without the database (issue 43; docs/reliability.md, "Database
outages"): gunicorn as the Procfile runs it, two workers, MONGODB_URI
naming a FerretDB that is not running (as a database blip during a deploy
leaves it). The service starts all the same: /healthz 200, /readyz 503
with the reason, the API's requests 503 problems and the console's pages
its 503 page, each within MONGODB_TIMEOUT_MS; the database then starts on
that address, and the same workers serve normally within seconds, no
restart. The background work (sweepers, the webhooks' deliverer) keeps
trying meanwhile, with one log line per outage and process, not one per try.

FerretDB is the wire suite's (tests/support/ferretdb.py: scripts/ferretdb
builds it, loudly failing without Go), started here on a port of the
test's own; the test runs wherever the slow tests run (scripts/test --all)."""
import http.client
import json
import os
import subprocess
import sys
import time
import urllib.parse

import pytest

from tests.support.ferretdb import FerretDB
from tests.support.served import ROOT, Gunicorn, children, free_port

pytestmark = pytest.mark.slow

TOKEN = "outage-test-token"
TIMEOUT_MS = 2000  # MONGODB_TIMEOUT_MS: the documented bound of a 503 while the database is away
# What a loaded machine (2 cores shared by the whole suite) adds to the
# bound: a request's own work, the worker's loop busy with other greenlets.
SLACK_SECONDS = 2.5
WORKERS = 2
# Long enough for every background task to try several times: the webhooks'
# deliverer every second (after its 2 s wait), the events' sweeper every 5 s.
DOWN_SECONDS = 10
RECOVERY_SECONDS = 15  # "within seconds of the database answering"
OUTAGE_LINE = "The database cannot be reached"
BACK_LINE = "The database answers again"


def _records(log_text):
    """The service's JSON log lines."""
    records = []
    for line in log_text.splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue
    return records


def _said(server, text):
    return sum(text in record.get("message", "") for record in _records(server.log_text()))


def _timed(call):
    started = time.monotonic()
    answer = call()
    return answer, time.monotonic() - started


def _page(port, path, form=None, headers=None):
    """A console page (GET, or POST of `form`), as a browser signed in with
    the admin token gets it, unless `headers` say otherwise."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    sent = {"Authorization": f"Bearer {TOKEN}", "Accept": "text/html", **(headers or {})}
    body = None
    if form is not None:
        body = urllib.parse.urlencode(form)
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    try:
        connection.request("GET" if form is None else "POST", path, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, response.headers, response.read().decode()
    finally:
        connection.close()


def _is_away_page(answer, took, bound):
    status, headers, text = answer
    assert status == 503 and took < bound, (status, took)
    assert headers["Content-Type"].startswith("text/html")  # the console's own page, no 500
    assert "Unavailable" in text and "cannot be reached" in text
    assert headers["Retry-After"] == "5"


def _wait_for(condition, seconds, what):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.2)


def _ready(server):
    try:
        return server.request("GET", "/readyz", timeout=10).status == 200
    except OSError:
        return False


def _is_away_problem(answer):
    assert answer.status == 503, answer
    assert answer.headers["Content-Type"] == "application/problem+json", answer.headers
    assert answer.headers["Retry-After"] == "5"
    assert "database" in answer.body["detail"], answer.body


def _serves_normally(server):
    """Organizations made and read back, through whichever worker answers."""
    for index in range(2 * WORKERS):
        made = server.request("POST", "/organizations", {"title": f"Acme {index}"})
        assert made.status == 201, made
        read = server.request("GET", f"/organizations/{made.body['id']}")
        assert read.status == 200 and read.body["title"] == f"Acme {index}", read
    page = server.request("GET", "/organizations?limit=1")  # a signed continuation token
    assert page.status == 200 and page.body["pagination"]["continue"], page


@pytest.fixture
def database(tmp_path):
    """A FerretDB that the release step has prepared, stopped: its data and
    indexes are there, and nothing answers on its port."""
    database = FerretDB(tmp_path / "ferretdb", free_port()).start()
    release = subprocess.run(
        [sys.executable, "-m", "flask", "--app", "app", "create-indexes"], cwd=ROOT,
        env={**os.environ, "MONGODB_URI": database.uri}, capture_output=True, text=True)
    assert release.returncode == 0, release.stdout + release.stderr
    database.stop()
    yield database
    database.stop()


def test_the_service_starts_without_its_database_and_serves_once_it_answers(database, tmp_path):
    server = Gunicorn(TOKEN, log=tmp_path / "gunicorn.log", env={
        "MONGODB_URI": database.uri, "MONGODB_TIMEOUT_MS": str(TIMEOUT_MS),
        "WEB_CONCURRENCY": str(WORKERS)})
    started = time.monotonic()
    try:
        _wait_for(lambda: len(children(server.process.pid)) == WORKERS, 30, "workers")
        workers = sorted(children(server.process.pid))
        bound = TIMEOUT_MS / 1000 + SLACK_SECONDS

        assert server.request("GET", "/healthz").status == 200
        ready, took = _timed(lambda: server.request("GET", "/readyz", token=None))
        _is_away_problem(ready)
        assert took < bound, took
        for method, path, body, token in (
                ("GET", "/organizations", None, TOKEN),
                ("POST", "/organizations", {"title": "Acme"}, TOKEN),
                ("GET", "/kubeclusters?filter=environment%3D%22production%22", None, TOKEN),
                ("GET", "/organizations", None, "inv_a-token-the-database-would-know")):
            answer, took = _timed(lambda: server.request(method, path, body, token=token))
            _is_away_problem(answer)  # a token it cannot look up: 503 too, never 401
            assert took < bound, (method, path, took)
        _is_away_page(*_timed(lambda: _page(server.port, "/ui/")), bound)
        # a sign-in with a token it cannot look up: the console's 503 page too
        status, headers, _ = _page(server.port, "/ui/sign-in", headers={"Authorization": ""})
        assert status == 200  # the form needs no database
        form_token = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
        for _ in range(2):  # the rate counter's first failure, then what it knows
            _is_away_page(*_timed(lambda: _page(
                server.port, "/ui/sign-in", {"form_token": form_token, "token": "inv_someone"},
                {"Authorization": "", "Cookie": f"inventory_sign_in={form_token}"})), bound)

        time.sleep(max(0.0, DOWN_SECONDS - (time.monotonic() - started)))
        assert server.process.poll() is None
        assert sorted(children(server.process.pid)) == workers
        # one line per process for the whole outage, whatever the tries; no traceback
        records = _records(server.log_text())
        assert _said(server, OUTAGE_LINE) == WORKERS, server.log_text()
        assert not [record for record in records if "exception" in record], server.log_text()
        assert [record["message"] for record in records if record["level"] != "info"
                and record["logger"] not in ("inventory.http.errors", "gunicorn.error")
                and OUTAGE_LINE not in record["message"]] == []

        database.start()
        answering = time.monotonic()
        _wait_for(lambda: _ready(server), RECOVERY_SECONDS, "not ready within seconds")
        recovered = time.monotonic() - answering
        _serves_normally(server)
        assert sorted(children(server.process.pid)) == workers  # no worker restarted
        _wait_for(lambda: _said(server, BACK_LINE) == WORKERS, RECOVERY_SECONDS,
                  "a worker did not say the database answers again")
        print(f"ready {recovered:.1f} s after the database answered")  # -s shows it

        # a second outage, while serving: one more line per process
        database.stop()
        _is_away_problem(server.request("GET", "/organizations"))
        _wait_for(lambda: _said(server, OUTAGE_LINE) == 2 * WORKERS, 30,
                  "a worker did not say the database is away")
        time.sleep(DOWN_SECONDS / 2)
        assert _said(server, OUTAGE_LINE) == 2 * WORKERS, server.log_text()
        database.start()
        _wait_for(lambda: _ready(server), RECOVERY_SECONDS, "not ready again within seconds")
        _serves_normally(server)
        assert sorted(children(server.process.pid)) == workers
        assert not [record for record in _records(server.log_text()) if "exception" in record]
    finally:
        server.stop(quick=True)
