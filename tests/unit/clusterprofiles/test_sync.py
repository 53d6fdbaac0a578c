"""The syncer's loop (inventory/clusterprofiles/sync.py) with an inventory
and a hub in memory: what the real-server tests cannot wait for (a scan
growing stale with time, a feed position expiring) or make happen (a hub
failing mid-way). tests/system/test_clusterprofiles_kube.py runs it whole
against a real kube-apiserver."""
import copy

import pytest

from inventory.clusterprofiles.hub import HubError
from inventory.clusterprofiles.profiles import Settings, manager_of
from inventory.clusterprofiles.source import FeedExpired, SourceError
from inventory.clusterprofiles.sync import Syncer

NOW = 1_800_000_000


class FakeInventory:
    def __init__(self, clusters=()):
        self.clusters = _Clusters({c["name"]: c for c in clusters})
        self.events = []
        self.expired = False
        self.down = 0

    def add(self, kind, record):
        self.events.append({"id": f"evt_{len(self.events) + 1:016x}", "type": kind,
                            "subject": f"/kubeclusters/{record['name']}", "object": record})

    def newest_event(self):
        return self.events[-1]["id"] if self.events else None

    def providers(self):
        return {"eks-prod": "eks"}

    def _maybe_down(self):
        if self.down:
            self.down -= 1
            raise SourceError("the inventory could not be reached")

    def events_after(self, position, wait=None):
        self._maybe_down()
        if self.expired:
            self.expired = False
            raise FeedExpired("gone", 410)
        return [e for e in self.events if position is None or e["id"] > position]

    def cluster(self, name):
        return self.clusters.get(name)


class _Clusters(dict):
    """The fake's clusters by name, which the syncer calls as it calls the
    real client's `clusters()`."""

    def __call__(self):
        return list(self.values())


class FakeHub:
    namespace = "fleet"

    def __init__(self):
        self.profiles_by_name = {}
        self.writes = []
        self.fail = {}  # action: HubError to raise once

    def _check(self, action):
        error = self.fail.pop(action, None)
        if error is not None:
            raise error

    def profiles(self):
        self._check("list")
        return copy.deepcopy(self.profiles_by_name)

    def read(self, name):
        return copy.deepcopy(self.profiles_by_name.get(name))

    def create(self, body):
        self._check("create")
        self.writes.append(("create", body["metadata"]["name"]))
        held = {**copy.deepcopy(body), "metadata": {**body["metadata"], "uid": "u"}}
        self.profiles_by_name[body["metadata"]["name"]] = held
        return copy.deepcopy(held)

    def patch(self, name, patch):
        self._check("patch")
        self.writes.append(("patch", name))
        held = self.profiles_by_name[name]
        for key, value in (patch.get("metadata") or {}).get("labels", {}).items():
            if value is None:
                held["metadata"]["labels"].pop(key, None)
            else:
                held["metadata"]["labels"][key] = value
        held["spec"].update(patch.get("spec") or {})
        return copy.deepcopy(held)

    def patch_status(self, name, status):
        self._check("status")
        self.writes.append(("status", name))
        self.profiles_by_name[name]["status"] = copy.deepcopy(status)
        return copy.deepcopy(self.profiles_by_name[name])

    def delete(self, name, uid):
        self._check("delete")
        self.writes.append(("delete", name))
        self.profiles_by_name.pop(name, None)


def _cluster(name, **fields):
    return {"id": f"k8scl_{name}", "name": name, "platform": "eks-prod", "organization": "org_1",
            "environment": "production", "version": "1.31.4", "labels": {}, "observed": None,
            "readiness": {"target": "1.32", "status": "unknown", "checks": []}, **fields}


class Clock:
    def __init__(self):
        self.now = NOW

    def __call__(self):
        return self.now


def _syncer(inventory, hub, clock=None):
    reports, said = [], []
    syncer = Syncer(inventory, hub, Settings(), reports.append, said.append,
                    clock=clock or Clock())
    return syncer, reports, said


def test_a_scan_growing_stale_is_written_again_without_any_event():
    clock = Clock()
    inventory = FakeInventory([_cluster("a", observed={"version": "v1.31.4",
                                                       "scanned_on": NOW - 7000})])
    hub = FakeHub()
    syncer, reports, _ = _syncer(inventory, hub, clock)
    syncer.reconcile()
    assert _healthy(hub, "a") == "True"
    hub.writes.clear()
    clock.now += 300  # past PT2H since the scan: no event says so
    syncer.follow_once()
    assert _healthy(hub, "a") == "Unknown"
    assert hub.writes == [("status", "a")]
    clock.now += 100
    syncer.follow_once()
    assert hub.writes == [("status", "a")] and reports == []  # once, not at every read


def test_an_expired_feed_position_is_a_full_reconcile():
    inventory = FakeInventory([_cluster("a")])
    hub = FakeHub()
    syncer, reports, _ = _syncer(inventory, hub)
    naps = []
    inventory.expired = True
    inventory.clusters["b"] = _cluster("b")  # made while the position expired: no event kept

    def stop():
        return len(naps) > 0 or ("b" in hub.profiles_by_name and reports)

    syncer.run(sleep=naps.append, stop=stop, resync=10**9)
    assert set(hub.profiles_by_name) == {"a", "b"}
    assert any("reconciling everything again" in line for line in reports)


def test_failures_are_one_line_and_retried_with_a_growing_backoff():
    inventory = FakeInventory([_cluster("a")])
    hub = FakeHub()
    syncer, reports, _ = _syncer(inventory, hub)
    hub.fail["list"] = HubError("list clusterprofiles in fleet: 503 unavailable", 503)
    naps = []
    syncer.run(sleep=naps.append, stop=lambda: "a" in hub.profiles_by_name and len(naps) >= 1,
               resync=10**9)
    inventory.down = 3
    syncer.run(sleep=naps.append, stop=lambda: len(naps) >= 4, resync=10**9)
    assert naps == [1.0, 1.0, 2.0, 4.0]
    assert all("\n" not in line for line in reports)
    assert reports[0] == "list clusterprofiles in fleet: 503 unavailable (again in 1 s)"


def test_a_profile_the_hub_refuses_is_said_and_the_others_are_written():
    inventory = FakeInventory([_cluster("a"), _cluster("b")])
    hub = FakeHub()
    syncer, reports, _ = _syncer(inventory, hub)
    hub.fail["create"] = HubError("create clusterprofile a: 422 invalid", 422)
    assert syncer.run(once=True) == 1
    assert set(hub.profiles_by_name) == {"b"}
    assert reports == ["clusterprofile a: create clusterprofile a: 422 invalid"]
    assert syncer.run(once=True) == 0 and set(hub.profiles_by_name) == {"a", "b"}


def test_events_apply_in_one_pass_per_page_and_pruning_spares_other_managers():
    inventory = FakeInventory([_cluster("a")])
    hub = FakeHub()
    hub.profiles_by_name["theirs"] = {"metadata": {"name": "theirs", "uid": "t", "labels": {}},
                                      "spec": {"clusterManager": {"name": "ocm"}}}
    syncer, reports, _ = _syncer(inventory, hub)
    syncer.reconcile()
    hub.writes.clear()
    inventory.add("kubecluster.updated", _cluster("a", title="One"))
    inventory.add("kubecluster.updated", _cluster("a", title="Two"))
    inventory.add("kubecluster.deleted", _cluster("gone-before-we-saw-it"))
    syncer.follow_once()
    assert hub.writes == [("patch", "a")]  # the page's last word, written once
    assert hub.profiles_by_name["a"]["spec"]["displayName"] == "Two"
    inventory.add("kubecluster.deleted", _cluster("a"))
    syncer.follow_once()
    assert set(hub.profiles_by_name) == {"theirs"}
    assert manager_of(hub.profiles_by_name["theirs"]) == "ocm" and reports == []


def test_a_scan_event_alone_moves_the_observed_time_and_a_late_one_does_not():
    clock = Clock()
    inventory = FakeInventory([_cluster("a", observed={"version": "v1.31.4",
                                                       "scanned_on": NOW - 600})])
    hub = FakeHub()
    syncer, _, _ = _syncer(inventory, hub, clock)
    syncer.reconcile()
    hub.writes.clear()

    def scan(scanned_on, version="v1.31.4"):
        inventory.events.append({
            "id": f"evt_{len(inventory.events) + 1:016x}", "type": "kubeclusterscan.created",
            "subject": "/kubeclusters/a/scans/k8scs_x",
            "object": {"id": "k8scs_x", "scanned_on": scanned_on,
                       "server": {"git_version": version}}})

    scan(NOW - 10)
    syncer.follow_once()
    assert hub.writes == [("status", "a")]
    [observed] = [p for p in hub.profiles_by_name["a"]["status"]["properties"]
                  if p["name"] == "cluster-inventory.io/observed-version"]
    assert observed["lastObservedTime"] == "2027-01-15T07:59:50Z"
    scan(NOW - 300, "v1.30.1")  # posted late: older than what the cluster holds
    syncer.follow_once()
    assert hub.writes == [("status", "a")]
    assert hub.profiles_by_name["a"]["status"]["version"] == {"kubernetes": "v1.31.4"}


def _healthy(hub, name):
    [condition] = [c for c in hub.profiles_by_name[name]["status"]["conditions"]
                   if c["type"] == "ControlPlaneHealthy"]
    return condition["status"]


def test_a_record_it_cannot_take_is_one_line_and_a_retry_not_an_exit():
    # a follower that exited would be restarted into the same answer: a crash loop
    inventory = FakeInventory([_cluster("a", labels=["not", "a", "map"])])
    hub = FakeHub()
    syncer, reports, _ = _syncer(inventory, hub)
    naps = []
    syncer.run(sleep=naps.append, stop=lambda: len(naps) >= 3, resync=10**9)
    assert naps == [1.0, 2.0, 4.0]
    assert reports[0].startswith("internal error: AttributeError: ")
    assert reports[0].endswith("(again in 1 s)") and all("\n" not in line for line in reports)
    inventory.clusters["a"] = _cluster("a")  # the answer mended: published at the next pass
    syncer.run(sleep=naps.append, stop=lambda: "a" in hub.profiles_by_name, resync=10**9)
    assert "a" in hub.profiles_by_name
    assert syncer.run(once=True) == 0
    inventory.clusters["a"] = _cluster("a", labels=["not", "a", "map"])
    assert syncer.run(once=True) == 1


def test_a_hub_that_refuses_the_syncers_credentials_holds_the_feed_until_it_takes_them():
    # a 401 is the hub refusing the syncer, not the profile: the change is
    # written once the credentials are good again, not skipped until a resync
    inventory = FakeInventory([_cluster("a")])
    hub = FakeHub()
    syncer, reports, _ = _syncer(inventory, hub)
    syncer.reconcile()
    inventory.add("kubecluster.updated", _cluster("a", title="Renamed"))
    hub.fail["patch"] = HubError("patch clusterprofile a: 401 Unauthorized", 401)
    with pytest.raises(HubError):  # the loop's one line and backoff (see above)
        syncer.follow_once()
    assert reports == [] and syncer.failures == 0
    assert hub.profiles_by_name["a"]["spec"]["displayName"] == "a"
    syncer.follow_once()
    assert hub.profiles_by_name["a"]["spec"]["displayName"] == "Renamed"


def test_a_name_another_manager_lets_go_is_published_at_its_next_change():
    inventory = FakeInventory([_cluster("a")])
    hub = FakeHub()
    hub.profiles_by_name["a"] = {"metadata": {"name": "a", "uid": "t", "labels": {}},
                                 "spec": {"clusterManager": {"name": "ocm"}}}
    syncer, reports, _ = _syncer(inventory, hub)
    syncer.reconcile()
    inventory.add("kubecluster.updated", _cluster("a", title="One"))
    syncer.follow_once()  # still theirs: said again, left as it is
    assert manager_of(hub.profiles_by_name["a"]) == "ocm" and len(reports) == 2
    del hub.profiles_by_name["a"]  # OCM lets the cluster go
    inventory.add("kubecluster.updated", _cluster("a", title="Two"))
    syncer.follow_once()
    assert manager_of(hub.profiles_by_name["a"]) == "cluster-inventory"
    assert hub.profiles_by_name["a"]["spec"]["displayName"] == "Two" and len(reports) == 2
