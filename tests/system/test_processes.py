"""Several processes on one database: the Procfile's gunicorn with two
workers (WEB_CONCURRENCY=2) on MONGODB_URI's server (scripts/wire runs it on
FerretDB), parallel requests spread over both workers, each round checked
for the anomalies the store's protocol rules out: a name taken twice, an
idempotent create made twice, an event lost, doubled or
out of order in the feed. Rounds: half of RACE_ROUNDS (each round
crosses the wire many times; scripts/wire sets 20)."""
import os
import threading
import uuid

import pytest

from tests.conftest import FERRETDB, REAL_MONGO, make_config
from tests.support.races import Anomalies, run_together
from tests.support.served import Gunicorn

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not REAL_MONGO, reason="several processes need a shared "
                                 "database: MONGODB_URI (scripts/wire)")]
ROUNDS = max(1, int(os.environ.get("RACE_ROUNDS", "200")) // 2)
TOKEN = "processes-admin-token"
PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}
WRITERS = 8


@pytest.fixture
def served():
    """gunicorn as the Procfile runs it, two workers, on a throwaway database
    whose indexes the release step made."""
    from app import create_app

    database = f"inventory_test_{uuid.uuid4().hex[:12]}"
    app = create_app(make_config(MONGODB_DB=database))
    store = app.extensions["inventory.store"]
    store.create_indexes()  # the release step
    server = Gunicorn(TOKEN, env={"MONGODB_URI": os.environ["MONGODB_URI"],
                                  "MONGODB_DB": database, "WEB_CONCURRENCY": "2",
                                  "RATE_LIMIT": "1000000 per minute",
                                  "CONCURRENT_REQUESTS": "0"},
                      ready="/readyz")
    yield server
    server.stop()
    store.db.client.drop_database(database)


def feed(served):
    events, after = [], None
    while True:
        page = served.request("GET", "/events?limit=100" + (f"&after={after}" if after else ""))
        assert page.status == 200, page.body
        if not page.body["results"]:
            return events
        events += page.body["results"]
        after = events[-1]["id"]


def test_two_workers_take_each_name_once(served):
    """(Quotas under parallel creates are raced in tests/api/test_quotas.py:
    FerretDB loses concurrent updates of one document, docs/deploy.md.)"""
    org = served.request("POST", "/organizations", {"title": "Acme"}).body["id"]
    platform = served.request("POST", "/kubeplatforms", {"name": "p", "organization": org,
                                                         **PLATFORM}).body["name"]
    anomalies, requests = Anomalies("two workers: names"), 0
    for round_ in range(ROUNDS):
        names = [f"c{round_}-{i % 6}" for i in range(WRITERS)]  # 6 names, two asked twice
        answers = run_together([
            lambda name=name: served.request("POST", "/kubeclusters", {
                "name": name, "platform": platform, "environment": "dev", "version": "1.30"})
            for name in names])
        requests += len(answers)
        created = [a.body["name"] for a in answers if a.status == 201]
        anomalies.check("a name taken twice", len(created) != len(set(created)))
        anomalies.check("an unexpected answer", [a.status for a in answers
                                                 if a.status not in (201, 409)])
        listed = served.request("GET", "/kubeclusters?limit=100").body["results"]
        if not FERRETDB:  # there, lost updates of the organization's quota counts
            # refuse a few creates (409, Contended: their reservation vanished)
            anomalies.check("not every name made", len(created) != len(set(names)))
        anomalies.check("listed is not what was created",
                        sorted(c["name"] for c in listed) != sorted(created))
        for name in created:
            assert served.request("DELETE", f"/kubeclusters/{name}").status == 204
    anomalies.assert_none(ROUNDS, requests)


def test_two_workers_replay_one_idempotent_create(served):
    anomalies, requests = Anomalies("two workers: idempotency keys"), 0
    for round_ in range(ROUNDS):
        key = f"k{round_}"
        answers = run_together([
            lambda: served.request("POST", "/organizations", {"title": f"o{round_}"},
                                   headers={"Idempotency-Key": key})
            for _ in range(WRITERS)])
        requests += len(answers)
        made = {a.body["id"] for a in answers if a.status == 201}
        anomalies.check("more than one made", len(made) > 1)
        anomalies.check("an unexpected answer", [a.status for a in answers
                                                 if a.status not in (201, 409)])
    organizations = served.request("GET", "/organizations?limit=100").body["results"]
    assert len(organizations) == ROUNDS
    anomalies.assert_none(ROUNDS, requests)


def test_two_workers_feed_every_event_once_in_one_order(served):
    anomalies, requests, made = Anomalies("two workers: the feed"), 0, []
    lock = threading.Lock()
    for round_ in range(ROUNDS):
        def create(index, round_=round_):
            answer = served.request("POST", "/organizations", {"title": f"w{index}-{round_}"})
            with lock:
                made.append(answer.body["id"])
            return answer
        answers = run_together([lambda index=index: create(index) for index in range(WRITERS)])
        requests += len(answers)
        anomalies.check("a create failed", [a.status for a in answers if a.status != 201])
    events = feed(served)
    ids = [event["id"] for event in events]
    anomalies.check("an event twice", len(ids) != len(set(ids)))
    anomalies.check("out of order", ids != sorted(ids))
    created = [event["object"]["id"] for event in events if event["type"] == "organization.created"]
    anomalies.check("an event lost or doubled", sorted(created) != sorted(made))
    anomalies.assert_none(ROUNDS, requests)
