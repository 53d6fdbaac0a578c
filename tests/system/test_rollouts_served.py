"""Rollouts served by gunicorn: a stage's turn comes within 5 s of what
brings it while nobody reads the rollout (the background look), whether a
soak ends or the last cluster of a stage is upgraded. Lists show the
status of the last look (they count nothing), so they tell what the look did."""
import os
import time

import pytest

from tests.support.served import Gunicorn

pytestmark = pytest.mark.slow
TOKEN = "rollouts-served-admin-token"
TURN_SECONDS = 5  # the contract's bound


@pytest.fixture(scope="module")
def served():
    server = Gunicorn(TOKEN, port=int(os.environ.get("ROLLOUTS_TEST_PORT") or 0) or None)
    org = server.request("POST", "/organizations", {"title": "Acme"}).body["id"]
    assert server.request("POST", "/kubeplatforms", {
        "name": "eks", "organization": org, "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}}).status == 201
    yield server
    server.stop()


def _cluster(served, name, version, **fields):
    assert served.request("POST", "/kubeclusters", {
        "name": name, "platform": "eks", "environment": "production", "version": version,
        **fields}).status == 201


def _listed_states(served, name):
    listed = served.request("GET", "/rollouts", headers={}).body["results"]
    (rollout,) = [r for r in listed if r["name"] == name]
    return [stage["state"] for stage in rollout["status"]["stages"]]


def _seconds_until(served, name, states):
    started = time.monotonic()
    while time.monotonic() - started < 4 * TURN_SECONDS:
        if _listed_states(served, name) == states:
            return time.monotonic() - started
        time.sleep(0.1)
    raise AssertionError(f"{name}: still {_listed_states(served, name)}")


def test_a_soak_that_ends_unread_opens_the_next_stage_within_5_seconds(served):
    _cluster(served, "soaked", "1.32.0", labels={"wave": "soak"})
    _cluster(served, "soak-rest", "1.31.2")
    made = served.request("POST", "/rollouts", {
        "name": "soak", "target": "1.32", "stages": [
            {"name": "canary", "filter": 'labels.wave="soak"', "soak": "PT2S"},
            {"name": "rest", "filter": 'name="soak-rest"'}]})
    assert made.status == 201, made.body
    assert [s["state"] for s in made.body["status"]["stages"]] == ["soaking", "waiting"]
    waited = _seconds_until(served, "soak", ["complete", "open"])
    assert waited <= 2 + TURN_SECONDS, waited


def test_the_last_cluster_upgraded_opens_the_next_stage_within_5_seconds(served):
    _cluster(served, "canary-1", "1.31.2", labels={"wave": "upgrade"})
    _cluster(served, "upgrade-rest", "1.31.2")
    assert served.request("POST", "/rollouts", {
        "name": "upgrade", "target": "1.32", "stages": [
            {"name": "canary", "filter": 'labels.wave="upgrade"'},
            {"name": "rest", "filter": 'name="upgrade-rest"'}]}).status == 201
    time.sleep(3)  # looked at, unchanged
    assert _listed_states(served, "upgrade") == ["open", "waiting"]
    assert served.request("PATCH", "/kubeclusters/canary-1", {"version": "1.32.0"}).status == 200
    waited = _seconds_until(served, "upgrade", ["complete", "open"])
    assert waited <= TURN_SECONDS, waited
    feed = served.request("GET", "/events?filter=" + "type%3D%22rollout.updated%22").body
    assert [event["changes"]["status.stages.rest.state"] for event in feed["results"]
            if event["subject"] == "/rollouts/upgrade"] == [{"from": "waiting", "to": "open"}]
