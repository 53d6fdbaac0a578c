"""The demo estate (inventory/cli/demo.py)."""
import collections
import contextlib
import contextvars
import datetime
import time

import pytest
import time_machine

from inventory.cli.demo import load_demo
from inventory.core import lifecycle
from inventory.core.versions import version_parts
from inventory.store import event_documents as events


def test_the_demos_events_are_by_whoever_made_its_records(store, current_actor):
    def load_as_someone():
        events.acting_as("someone")
        assert load_demo(store) is True
        return current_actor()
    # its own context: the caller's actor is left as it was
    assert contextvars.copy_context().run(load_as_someone) == "someone"
    feed = list(store.events.collection.find({"type": {"$exists": True}}))
    assert len(feed) > 70  # 3 organizations, 4 platforms, 12 clusters, 84 scans
    assert {event["actor"] for event in feed} == {"demo"}
    objects = [store.events.get(f"evt_{event['_id']}")["object"] for event in feed]
    authors = {record.get("created_by") for record in objects} - {None}  # scans keep none
    assert authors == {"demo"}


# The demo estate looks like a fleet on whatever day it is loaded: its
# versions are chosen from the lifecycle data for that day, its scans are
# of the last week before it, and its scans name only APIs that their
# API server still serves.
A_YEAR_ON = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=365)


def _minor(text):
    parts = version_parts(text)
    return parts[:2]


def _loaded(client, store):
    assert load_demo(store) is True
    return client.get("/kubeclusters?limit=100").get_json()["results"]


@pytest.mark.parametrize("day", ["today", "a year on"])
def test_the_demo_shows_every_support_status_the_data_offers_that_day(client, store, day):
    with time_machine.travel(A_YEAR_ON, tick=True) if day == "a year on" \
            else contextlib.nullcontext():
        clusters = _loaded(client, store)
        today = lifecycle.today()
    data = lifecycle.Lifecycles.load()
    offered = {cycle.status(today)[0] for distribution in ("eks", "gke", "aks")
               for cycle in data.cycles[distribution].values()}
    shown = {cluster["support"]["status"] for cluster in clusters}
    wanted = offered & {"supported", "ending", "extended"}
    assert wanted and wanted <= shown, (today, offered, shown)
    assert "unknown" not in shown


def test_the_demo_is_a_mix_of_passing_warning_and_error(client, store):
    clusters = _loaded(client, store)
    statuses = collections.Counter(cluster["readiness"]["status"] for cluster in clusters)
    assert statuses["passing"] >= 3 and statuses["warning"] >= 2 and statuses["error"] >= 2, \
        statuses
    assert statuses["passing"] > statuses["error"]  # a fleet mostly ready, not a broken one
    blockers = {check["id"] for cluster in clusters for check in cluster["readiness"]["checks"]
                if check["status"] in ("warning", "error")}
    assert len(blockers) >= 3, blockers  # more than one kind of trouble


def test_the_demos_scans_are_of_the_last_days(client, store):
    now = time.time()
    clusters = _loaded(client, store)
    for cluster in clusters:
        scans = client.get(f"/kubeclusters/{cluster['name']}/scans").get_json()["results"]
        assert len(scans) == 7
        assert all(now - 11 * 86400 < scan["scanned_on"] <= now for scan in scans), cluster["name"]
        assert now - cluster["last_scanned_on"] < 5 * 86400, cluster["name"]
    newest = max(cluster["last_scanned_on"] for cluster in clusters)
    assert now - newest < 86400


def test_the_demos_scans_name_only_apis_their_server_still_serves(client, store):
    clusters = _loaded(client, store)
    seen = 0
    for cluster in clusters:
        for scan in client.get(f"/kubeclusters/{cluster['name']}/scans").get_json()["results"]:
            if scan["server"] is None:
                continue  # an older scan, which has let its observations go
            served_by = max(_minor(scan["server"]["git_version"]), _minor(cluster["version"]))
            for api in scan["deprecated_api_requests"]:
                seen += 1
                assert not api["removed_release"] or \
                    _minor(api["removed_release"]) > served_by, (cluster["name"], api)
            for finding in scan["findings"]:
                assert _minor(finding["removed_in"]) > served_by, (cluster["name"], finding)
    assert seen  # the rule was put to work
