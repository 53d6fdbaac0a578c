"""The bench's own estate is one the service serves correctly, and its
framework floor answers as the service does."""
import pytest

from bench import framework_app, run
from bench.seeding import seed
from tests.conftest import client_with, walk
from tests.support.ordering import expected


def test_bench_seeding_makes_records_the_service_serves(app, store):
    reader = client_with(app, seed(store, 30))
    assert len(reader.get("/kubeclusters?limit=100").get_json()["results"]) == 30
    first = reader.get("/kubeclusters?limit=1").get_json()["results"][0]
    scans = reader.get(f"/kubeclusters/{first['id']}/scans?limit=100").get_json()["results"]
    assert len(scans) == 30 and first["last_scanned_on"] == scans[-1]["scanned_on"]
    assert len(reader.get("/kubeclusters", query_string={"filter": 'version<"1.29"'}
                          ).get_json()["results"]) == 6
    assert reader.post(f"/kubeclusters/{first['name']}/scans", json={}).status_code == 201
    # the seeded order keys are the store's own: an ordered walk is in order
    everything = reader.get("/kubeclusters?limit=100").get_json()["results"]
    walked, _ = walk(reader, "/kubeclusters", limit=7, order_by="version desc")
    assert [r["name"] for r in walked] == \
        [r["name"] for r in expected(everything, "version desc", "name")]


def _fetch(client):
    """The bench's `fetch(method, path, body)` on a Flask test client."""
    def fetch(method, path, body=None):
        response = client.open(path, method=method, data=body, content_type="application/json")
        return response.status_code, response.data
    return fetch


def test_framework_floor_answers_every_bench_route_as_the_service_does(app, store):
    service = _fetch(client_with(app, seed(store, 30)))
    routes = run.discover_routes(service, 30)
    answers = run.capture(routes, service)
    filtered = next(r for r in routes if r["name"] == "GET filtered page")
    assert run.records_in(answers[run.answer_key(filtered)]) > 0  # the seeding has matches
    framework = _fetch(framework_app.create_app(answers).test_client())
    run.check_same(routes, answers, framework, "framework")
    # ...and the check sees a difference: here, another continue token
    deep = run.answer_key(next(r for r in routes if r["name"] == "GET page at 90% depth"))
    altered = {**answers, deep: [200, answers[deep][1].replace('"continue":"', '"continue":"x')]}
    with pytest.raises(SystemExit, match="GET page at 90% depth"):
        run.check_same(routes, altered, framework, "framework")


def test_framework_floor_dumps_schema_urls_in_a_process_of_its_own():
    """gunicorn loads the floor in a fresh interpreter, where nothing of the
    service was imported before it (here the test session imported the
    app): it must hand BodySchema its `$schema` URL maker itself."""
    import os
    import subprocess
    import sys

    dumped = subprocess.run([sys.executable, "-c", (
        "from bench.framework_app import create_app\n"
        "from schemas.platforms import KubePlatformSchema\n"
        "with create_app({}).test_request_context('/', base_url='http://127.0.0.1'):\n"
        "    print(KubePlatformSchema().dump({'name': 'x'})['$schema'])\n")],
        capture_output=True, text=True, timeout=120,
        cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert dumped.returncode == 0, dumped.stderr
    assert dumped.stdout.strip() == "http://127.0.0.1/schemas/KubePlatform.json"
