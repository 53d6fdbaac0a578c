"""A forced delete of a large organization, served as the Procfile serves it,
killed with SIGKILL midway: after a restart the delete completes by itself
and leaves nothing behind (no record without its parent, no name that
409s forever), and the other organization is whole."""
import os
import shutil
import signal
import threading
import time
import urllib.parse

import pytest

from tests.support.served import Gunicorn

pytestmark = pytest.mark.slow

TOKEN = "forced-delete-admin-token-0123456789"
CLUSTERS, SCANS = 1800, 2  # two organizations of 900 clusters (a platform each: within the quota)
KILL_AFTER = (0.1, 0.3, 0.6)  # seconds into the delete: one round each


def _open(data):
    from app import create_app
    from inventory.config import Config

    return create_app(Config(TESTING=True, INVENTORY_DATA_DIR=str(data), INVENTORY_FSYNC="no"))


@pytest.fixture(scope="module")
def estate(tmp_path_factory):
    data = tmp_path_factory.mktemp("estate") / "data"
    app = _open(data)
    result = app.test_cli_runner().invoke(args=[
        "seed", "--clusters", str(CLUSTERS), "--scans-per-cluster", str(SCANS),
        "--organizations", "2"])
    assert result.exit_code == 0, result.output
    store = app.extensions["inventory.store"]
    orgs = sorted(doc["_id"] for doc in store.organizations.collection.find({}, {"_id": 1}))
    store.db.journal.close()
    return data, orgs


def _offline_counts(data, org):
    """What the data dir holds, read without serving (nothing finishes a delete):
    (records of `org`'s subtree left, records marked by a delete)."""
    app = _open(data)
    store = app.extensions["inventory.store"]
    try:
        platforms = [doc["_id"] for doc in store.platforms.collection.find(
            {"organization": org}, {"_id": 1})]
        left = (len(platforms) + store.organizations.collection.count_documents({"_id": org})
                + store.clusters.collection.count_documents({"organization": org}))
        marked = sum(len(resource.marked(False)) for resource in store.listed())
        return left, marked
    finally:
        store.db.journal.close()


def _listed(served, path, filter_text):
    query = urllib.parse.urlencode({"filter": filter_text, "limit": 100})
    answer = served.request("GET", f"{path}?{query}")
    assert answer.status == 200, answer.body
    return answer.body["results"]


@pytest.mark.parametrize("kill_after", KILL_AFTER)
def test_a_forced_delete_killed_midway_completes_after_a_restart(estate, tmp_path, kill_after):
    seeded, (doomed, kept) = estate
    data = tmp_path / "data"
    shutil.copytree(seeded, data, ignore=shutil.ignore_patterns("lock"))
    env = {"INVENTORY_DATA_DIR": str(data), "INVENTORY_FSYNC": "always"}
    served = Gunicorn(TOKEN, env=env, log=tmp_path / "first.log")
    try:
        kept_clusters = len(_listed(served, "/kubeclusters", f'organization="{kept}"'))
        assert kept_clusters == 100  # a page's worth: the other organization's, whole
        doomed_platform = _listed(served, "/kubeplatforms", f'organization="{doomed}"')[0]["name"]
        doomed_cluster = _listed(served, "/kubeclusters", f'organization="{doomed}"')[0]["name"]
        answers = []
        deleting = threading.Thread(target=lambda: answers.append(_answer_or_error(
            served, f"/organizations/{doomed}?force=true")), daemon=True)
        deleting.start()
        time.sleep(kill_after)
        _kill_all(served)
        deleting.join(30)
    finally:
        _kill_all(served)
    left, marked = _offline_counts(data, doomed)
    if answers and answers[0] == 204:  # it finished before the kill: nothing to resume
        assert (left, marked) == (0, 0)
        pytest.skip(f"the delete finished within {kill_after} s; nothing was interrupted")
    assert marked > 0 and left > 0, "the kill did not interrupt the delete"

    served = Gunicorn(TOKEN, env=env, log=tmp_path / "second.log")
    try:
        # no name 409s forever: the doomed platform's name is free once the
        # restarted process has finished the delete (409 until then)
        platform = {"name": doomed_platform, "organization": kept,
                    "control_plane": {"provider": "eks"},
                    "infrastructure": {"cloud": {"provider": "aws"}}}
        deadline = time.monotonic() + 120
        while (created := served.request("POST", "/kubeplatforms", platform)).status == 409 \
                and time.monotonic() < deadline:
            time.sleep(0.5)
        assert created.status == 201, created.body
        assert served.request("GET", f"/organizations/{doomed}").status == 404
        assert _listed(served, "/kubeplatforms", f'organization="{doomed}"') == []
        assert _listed(served, "/kubeclusters", f'organization="{doomed}"') == []
        assert served.request("POST", "/kubeclusters", {
            "name": doomed_cluster, "platform": doomed_platform,
            "environment": "dev", "version": "1.31.0"}).status == 201
        # the other organization is whole
        assert served.request("GET", f"/organizations/{kept}").status == 200
        summary = served.request("GET", "/kubeclusters:summary?group_by=organization")
        assert summary.status == 200, summary.body
        counts = {group["key"]["organization"]: group["count"]
                  for group in summary.body["groups"]}
        assert counts == {kept: CLUSTERS // 2 + 1}
    finally:
        served.stop()
    assert _offline_counts(data, doomed) == (0, 0)
    app = _open(data)
    store = app.extensions["inventory.store"]
    try:  # no record without its parent
        platforms = {doc["_id"] for doc in store.platforms.collection.find({}, {"_id": 1})}
        clusters = {doc["id"] for doc in store.clusters.collection.find(
            {}, {"id": 1, "platform": 1}) if doc["platform"] in platforms}
        assert store.clusters.collection.count_documents({}) == len(clusters)
        assert {doc["cluster"] for doc in store.scans.collection.find({}, {"cluster": 1})} \
            <= clusters
        assert store.scans.collection.count_documents({}) == CLUSTERS // 2 * SCANS
    finally:
        store.db.journal.close()


def _answer_or_error(served, path):
    try:
        return served.request("DELETE", path, timeout=60).status
    except OSError as error:
        return error


def _kill_all(served):
    """SIGKILL the master and its worker: nothing gets to clean up."""
    if served.process.poll() is None:
        for pid in (served.worker(), served.process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        served.process.wait(timeout=30)
    if served.log is not None and not served.log.closed:
        served.log.close()
