"""Fuzzing the service through its own OpenAPI document (schemathesis).

Every operation is called with generated requests, valid and invalid; no
answer may be a 500, and every answer must be one the document describes
(status, headers, body schema, content type).
"""
import uuid

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import positive_data_acceptance

from app import create_app
from inventory.config import Config
from tests.conftest import ADMIN_TOKEN, REAL_MONGO

pytestmark = pytest.mark.slow  # scripts/test --all

# schemathesis collects its cases from a module-level schema, so the app is
# made here; on a real server it gets a throwaway database, dropped below.
_DATABASE = f"inventory_fuzz_{uuid.uuid4().hex[:12]}" if REAL_MONGO else None
# Its requests without a token come from one address, thousands of them: the
# address's rate limit (tests/api/test_limits.py) would answer them 429 where
# schemathesis checks for the 401. And its WSGI client never closes an
# answer, so no request would give its slot among the caller's requests in
# flight back.
app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN=ADMIN_TOKEN, MONGODB_DB=_DATABASE,
                        RATE_LIMIT_ANONYMOUS="1000000 per minute", CONCURRENT_REQUESTS=0))
# The token goes in through the document's own security scheme, so that
# schemathesis knows which requests it authenticates (and which it leaves
# without a token, on purpose, to check the 401s).
schema = schemathesis.openapi.from_wsgi("/openapi.json", app, config=schemathesis.Config.from_dict(
    {"auth": {"openapi": {"bearerAuth": {"bearer": ADMIN_TOKEN}}}}))


@pytest.fixture(scope="module", autouse=True)
def _drop_database():
    yield
    if REAL_MONGO:
        store = app.extensions["inventory.store"]
        store.db.client.drop_database(store.db.name)


def _seed():
    """A few records, so that generated paths can hit real ones too."""
    if REAL_MONGO:
        app.extensions["inventory.store"].create_indexes()
    client = app.test_client()
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    org = client.post("/organizations", json={"title": "Fuzz"}, headers=headers).get_json()["id"]
    client.post("/kubeplatforms", headers=headers, json={
        "name": "a", "organization": org, "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}})
    client.post("/kubeclusters", headers=headers, json={
        "name": "a", "platform": "a", "environment": "dev", "version": "1.30"})


_seed()


@schema.parametrize()
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
def test_no_answer_is_a_500_or_contradicts_the_document(case):
    # positive_data_acceptance is left out: a schema-valid `continue` or
    # `filter` can still be refused (an opaque token, a filter's grammar), and
    # the document says so with its 422. Every other check runs.
    case.call_and_validate(excluded_checks=[positive_data_acceptance])


class Workflow(schema.as_state_machine()):
    """Stateful: chains operations along the document's links (create, then
    read, change, delete, list what was made), checking every answer. Each
    scenario starts from the same records, so that Hypothesis can replay it."""

    def setup(self):
        store = app.extensions["inventory.store"]
        for name in ("organizations", "platforms", "clusters", "scans", "tokens", "idempotency"):
            store.db[name].delete_many({})
        _seed()

    succeeded = set()  # (method, path template) of the 2xx answers seen

    def validate_response(self, response, case, additional_checks=None, **kwargs):
        if 200 <= response.status_code < 300:
            Workflow.succeeded.add((case.method.upper(), case.path))
        case.validate_response(response, additional_checks=additional_checks,
                               excluded_checks=[positive_data_acceptance],
                               transport_kwargs=kwargs or None)


def test_stateful_sequences_along_the_links_find_nothing():
    Workflow.run(settings=settings(max_examples=40, stateful_step_count=6, deadline=None,
                                   suppress_health_check=list(HealthCheck)))
    # the links were followed: a record made in one step was used by the next
    document = app.test_client().get("/openapi.json").get_json()
    targets = {link["operationId"] for item in document["paths"].values()
               for entry in item.values() if isinstance(entry, dict)
               for answer in entry.get("responses", {}).values()
               for link in answer.get("links", {}).values()}
    linked = {(method.upper(), path) for path, item in document["paths"].items()
              for method, entry in item.items()
              if isinstance(entry, dict) and entry.get("operationId") in targets}
    assert linked & Workflow.succeeded, sorted(Workflow.succeeded)
