"""The ClusterProfile syncer (`python -m inventory.clusterprofiles`) against
a real kube-apiserver with the ClusterProfile CRD (tests/support/
kube_apiserver.py), run with a ServiceAccount's token that holds only the
Role of docs/clusterprofiles.md (applied from the page itself), reading a
served inventory with a token scoped to one organization."""
import json
import subprocess
import sys
import time
import uuid

import pytest
import yaml

from tests.support.served import ROOT, Gunicorn, free_port

pytestmark = pytest.mark.slow
ADMIN = "clusterprofiles-admin-token"
PROFILES = "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/{}/clusterprofiles"
FOLLOW_WITHIN = 5.0  # seconds: the contract's bound on applying a change


def _doc_manifests():
    """The Namespace, ServiceAccount, Role and RoleBinding of the page."""
    text = (ROOT / "docs" / "clusterprofiles.md").read_text()
    [block] = [b.split("```", 1)[0] for b in text.split("```yaml\n")[1:] if "kind: Role\n" in b]
    return [doc for doc in yaml.safe_load_all(block)
            if doc["kind"] in ("Namespace", "ServiceAccount", "Role", "RoleBinding")]


def _in_namespace(manifest, namespace):
    text = json.dumps(manifest).replace('"fleet"', json.dumps(namespace))
    return json.loads(text)


@pytest.fixture(scope="module")
def inventory():
    server = Gunicorn(ADMIN)  # on a free port of TEST_PORTS: a shared machine's share
    yield server
    server.stop()


class Org:
    """An organization of its own for one test, with a platform, and a
    reader token scoped to it."""

    def __init__(self, inventory):
        self.inventory = inventory
        self.id = self.post("/organizations", {"title": f"Org {uuid.uuid4().hex[:6]}"})["id"]
        self.platform = f"eks-{uuid.uuid4().hex[:8]}"
        self.post("/kubeplatforms", {"name": self.platform, "organization": self.id,
                                     "title": "EKS", "control_plane": {"provider": "eks"},
                                     "infrastructure": {"cloud": {"provider": "aws"}}})
        self.token = self.post("/tokens", {"name": f"syncer-{uuid.uuid4().hex[:6]}",
                                           "role": "reader", "organization": self.id})["token"]

    def post(self, path, body):
        answer = self.inventory.request("POST", path, body)
        assert answer.status == 201, answer.body
        return answer.body

    def cluster(self, name, **fields):
        return self.post("/kubeclusters", {"name": name, "platform": self.platform,
                                           "environment": "production", "version": "1.31.4",
                                           **fields})

    def patch(self, name, body):
        answer = self.inventory.request("PATCH", f"/kubeclusters/{name}", body)
        assert answer.status == 200, answer.body
        return answer.body

    def delete(self, name):
        assert self.inventory.request("DELETE", f"/kubeclusters/{name}").status == 204

    def scan(self, name, scanned_on=None, kubelet="v1.31.4"):
        return self.post(f"/kubeclusters/{name}/scans", {
            "scanned_on": int(scanned_on or time.time()), "server": {"git_version": "v1.31.4"},
            "nodes": {"count": 3, "kubelet_versions": {kubelet: 3},
                      "kube_proxy_versions": {"v1.31.4": 3}},
            "deprecated_api_requests": []})


@pytest.fixture
def org(inventory):
    return Org(inventory)


class Hub:
    """A namespace of the real API server with the page's Role, and the
    syncer run against it with its ServiceAccount's token."""

    def __init__(self, kube, tmp_path, inventory_port):
        self.kube, self.inventory_port = kube, inventory_port
        self.namespace = f"fleet-{uuid.uuid4().hex[:8]}"
        for manifest in _doc_manifests():
            kube.apply(_in_namespace(manifest, self.namespace))
        self.token = kube.service_account_token(self.namespace, "inventory-clusterprofiles")
        self.kubeconfig = kube.kubeconfig(tmp_path / f"{self.namespace}.kubeconfig", self.token)
        self.tmp_path = tmp_path
        self.followers = []

    def profiles(self):
        status, body = self.kube.request("GET", PROFILES.format(self.namespace))
        assert status == 200, body
        return {item["metadata"]["name"]: item for item in body["items"]}

    def command(self, token, *args):
        return [sys.executable, "-m", "inventory.clusterprofiles", "--namespace", self.namespace,
                "--kubeconfig", str(self.kubeconfig), *args]

    def env(self, token):
        return {"PATH": "/usr/bin:/bin", "HOME": str(self.tmp_path),
                "INVENTORY_URL": f"http://127.0.0.1:{self.inventory_port}",
                "INVENTORY_TOKEN": token}

    def once(self, token, *args):
        return subprocess.run(self.command(token, "--once", *args), cwd=ROOT, env=self.env(token),
                              capture_output=True, text=True, timeout=120)

    def follow(self, token, *args):
        log = open(self.tmp_path / f"syncer-{len(self.followers)}.log", "w+")
        process = subprocess.Popen(self.command(token, *args), cwd=ROOT, env=self.env(token),
                                   stdout=log, stderr=subprocess.STDOUT)
        self.followers.append((process, log))
        return process

    def stop(self, process):
        process.terminate()
        assert process.wait(timeout=30) == 0

    def log(self, process):
        [log] = [log for p, log in self.followers if p is process]
        log.flush()
        log.seek(0)
        return log.read()

    def close(self):
        for process, log in self.followers:
            if process.poll() is None:
                process.kill()
                process.wait()
            log.close()


@pytest.fixture
def hub(kube_apiserver, tmp_path, inventory):
    hub = Hub(kube_apiserver, tmp_path, inventory.port)
    yield hub
    hub.close()


def _until(check, timeout, what):
    """Seconds until `check()` is true; fails past `timeout`."""
    started = time.monotonic()
    while True:
        if check():
            return time.monotonic() - started
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.05)


def _property(profile, name):
    found = [p for p in profile["status"].get("properties", []) if p["name"] == name]
    return found[0] if found else None


def _condition(profile, kind):
    [found] = [c for c in profile["status"]["conditions"] if c["type"] == kind]
    return found


def test_once_publishes_each_cluster_the_token_sees_as_the_contract_says(org, inventory, hub):
    payments = org.cluster("payments-" + org.id[-6:], title="Payments (EU)",
                           endpoint="https://payments.example.com",
                           labels={"team": "payments", "app.kubernetes.io/part-of": "checkout",
                                   # the inventory's values may be text; Kubernetes' may not
                                   "owner": "Payments team (EU)", "long": "x" * 64})
    org.scan(payments["name"])
    quiet = org.cluster("quiet-" + org.id[-6:])  # never scanned, no endpoint, no title
    other = Org(inventory)  # another organization: out of the scoped token's sight
    other.cluster("elsewhere-" + other.id[-6:])

    run = hub.once(org.token)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    profiles = hub.profiles()
    assert set(profiles) == {payments["name"], quiet["name"]}

    profile = profiles[payments["name"]]
    assert profile["spec"] == {"clusterManager": {"name": "cluster-inventory"},
                               "displayName": "Payments (EU)"}
    assert profile["metadata"]["labels"] == {
        "team": "payments", "app.kubernetes.io/part-of": "checkout",
        "cluster-inventory.io/environment": "production",
        "cluster-inventory.io/platform": org.platform,
        "cluster-inventory.io/organization": org.id,
        "x-k8s.io/cluster-manager": "cluster-inventory"}
    status = profile["status"]
    assert status["version"] == {"kubernetes": "v1.31.4"}
    assert _property(profile, "cluster.clusterset.k8s.io")["value"] == payments["id"]
    assert _property(profile, "cluster-inventory.io/provider")["value"] == "eks"
    assert _property(profile, "cluster-inventory.io/environment")["value"] == "production"
    assert _property(profile, "cluster-inventory.io/organization")["value"] == org.id
    cluster = inventory.request("GET", f"/kubeclusters/{payments['name']}").body
    assert _property(profile, "cluster-inventory.io/support-status")["value"] == \
        cluster["support"]["status"]
    readiness = _property(profile, "cluster-inventory.io/readiness-status")
    assert readiness["value"] == cluster["readiness"]["status"]
    assert readiness["lastObservedTime"].startswith(time.strftime("%Y-%m-%d", time.gmtime()))
    assert _property(profile, "cluster-inventory.io/readiness-target")["value"] == "1.32"
    assert "lastObservedTime" not in _property(profile, "cluster-inventory.io/environment")
    healthy = _condition(profile, "ControlPlaneHealthy")
    assert (healthy["status"], healthy["reason"]) == ("True", "ScanObservedAPIServer")
    ready = _condition(profile, "UpgradeReady")
    expected = {"passing": "True", "warning": "True", "error": "False", "unknown": "Unknown"}
    assert ready["status"] == expected[cluster["readiness"]["status"]]
    assert status["accessProviders"] == [{"name": "inventory",
                                          "cluster": {"server": "https://payments.example.com"}}]

    never = profiles[quiet["name"]]
    assert never["spec"]["displayName"] == quiet["name"]
    assert never["status"]["version"] == {"kubernetes": "1.31.4"}  # the recorded one
    healthy = _condition(never, "ControlPlaneHealthy")
    assert (healthy["status"], healthy["reason"]) == ("Unknown", "NeverScanned")
    assert _condition(never, "UpgradeReady")["status"] == "Unknown"
    assert _property(never, "cluster-inventory.io/observed-version") is None
    assert not never["status"].get("accessProviders")


def test_a_stale_scan_leaves_control_plane_healthy_unknown(org, hub):
    name = org.cluster("stale-" + org.id[-6:])["name"]
    org.scan(name, scanned_on=time.time() - 3 * 3600)
    assert hub.once(org.token).returncode == 0
    healthy = _condition(hub.profiles()[name], "ControlPlaneHealthy")
    assert (healthy["status"], healthy["reason"]) == ("Unknown", "ScanStale")
    assert hub.once(org.token, "--stale-after", "PT4H").returncode == 0
    assert _condition(hub.profiles()[name], "ControlPlaneHealthy")["status"] == "True"


def test_following_the_feed_applies_each_change_within_5_s_and_writes_only_what_changed(
        org, hub):
    keep = org.cluster("keep-" + org.id[-6:])["name"]
    syncer = hub.follow(org.token)
    _until(lambda: "status" in hub.profiles().get(keep, {}), 60, "the first reconcile")
    untouched = hub.profiles()[keep]["metadata"]["resourceVersion"]

    name = "live-" + org.id[-6:]
    org.cluster(name, labels={"tier": "gold"})
    _until(lambda: name in hub.profiles(), FOLLOW_WITHIN, "the created cluster's profile")

    org.patch(name, {"title": "Live one", "labels": {"tier": "silver"}})
    _until(lambda: hub.profiles()[name]["spec"]["displayName"] == "Live one"
           and hub.profiles()[name]["metadata"]["labels"].get("tier") == "silver",
           FOLLOW_WITHIN, "the changed title and label")

    org.scan(name)
    _until(lambda: _condition(hub.profiles()[name], "ControlPlaneHealthy")["status"] == "True"
           and hub.profiles()[name]["status"]["version"]["kubernetes"] == "v1.31.4",
           FOLLOW_WITHIN, "the scan's observations")

    org.delete(name)
    _until(lambda: name not in hub.profiles(), FOLLOW_WITHIN, "the deleted cluster's profile")

    assert hub.profiles()[keep]["metadata"]["resourceVersion"] == untouched
    hub.stop(syncer)
    assert "error" not in hub.log(syncer).lower(), hub.log(syncer)


def test_another_managers_profile_is_reported_and_left_as_it_is(org, hub, kube_apiserver):
    shared = org.cluster("shared-" + org.id[-6:])["name"]
    theirs = {"apiVersion": "multicluster.x-k8s.io/v1alpha1", "kind": "ClusterProfile",
              "metadata": {"name": shared, "namespace": hub.namespace,
                           "labels": {"x-k8s.io/cluster-manager": "open-cluster-management"}},
              "spec": {"clusterManager": {"name": "open-cluster-management"},
                       "displayName": "OCM's"}}
    kube_apiserver.apply(theirs)
    orphan = {**theirs, "metadata": {**theirs["metadata"], "name": "ocm-only"}}
    kube_apiserver.apply(orphan)  # no such cluster in the inventory: not ours to prune
    before = {name: p["metadata"]["resourceVersion"] for name, p in hub.profiles().items()}

    run = hub.once(org.token)
    assert run.returncode == 1
    assert f"clusterprofile {shared} is held by the cluster manager 'open-cluster-management'" \
        in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    after = hub.profiles()
    assert {name: after[name]["metadata"]["resourceVersion"] for name in before} == before
    assert after[shared]["spec"]["displayName"] == "OCM's"


def test_a_restarted_syncer_catches_up_with_what_changed_while_it_was_down(org, hub):
    names = [f"{word}-{org.id[-6:]}" for word in ("one", "two", "three")]
    org.cluster(names[0])
    org.cluster(names[1])
    syncer = hub.follow(org.token)
    _until(lambda: set(hub.profiles()) == set(names[:2]), 60, "the first reconcile")
    hub.stop(syncer)

    org.patch(names[0], {"title": "Changed while down"})
    org.delete(names[1])
    org.cluster(names[2])
    org.scan(names[2])
    assert set(hub.profiles()) == set(names[:2])  # nothing follows while it is down

    hub.follow(org.token)
    _until(lambda: set(hub.profiles()) == {names[0], names[2]}, 60, "the catch-up")
    profiles = hub.profiles()
    _until(lambda: hub.profiles()[names[0]]["spec"]["displayName"] == "Changed while down",
           10, "the change made while down")
    assert _condition(profiles[names[2]], "ControlPlaneHealthy")["status"] == "True"


def test_dry_run_prints_each_write_and_makes_none(org, hub):
    name = org.cluster("dry-" + org.id[-6:])["name"]
    run = hub.once(org.token, "--dry-run")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [(line["dry_run"], line["name"]) for line in lines] == [("create", name),
                                                                    ("status", name)]
    assert lines[0]["body"]["spec"]["clusterManager"] == {"name": "cluster-inventory"}
    assert hub.profiles() == {}


def test_a_second_run_writes_nothing_when_nothing_changed(org, hub):
    org.cluster("same-" + org.id[-6:], labels={"team": "a"})
    first = hub.once(org.token)
    assert first.returncode == 0 and "create clusterprofile" in first.stdout
    versions = {name: p["metadata"]["resourceVersion"] for name, p in hub.profiles().items()}
    second = hub.once(org.token)
    assert (second.returncode, second.stdout, second.stderr) == (0, "", "")
    assert {name: p["metadata"]["resourceVersion"]
            for name, p in hub.profiles().items()} == versions


def test_the_role_grants_the_profiles_of_its_namespace_and_nothing_else(hub, kube_apiserver):
    token = hub.token
    assert kube_apiserver.request("GET", PROFILES.format(hub.namespace), token=token)[0] == 200
    assert kube_apiserver.request("GET", PROFILES.format("default"), token=token)[0] == 403
    assert kube_apiserver.request(
        "GET", "/apis/multicluster.x-k8s.io/v1alpha1/clusterprofiles", token=token)[0] == 403
    assert kube_apiserver.request(
        "GET", f"/api/v1/namespaces/{hub.namespace}/secrets", token=token)[0] == 403



def test_refusals_from_either_side_are_one_line_and_an_exit_code_not_a_trace(org, hub,
                                                                              kube_apiserver):
    org.cluster("refused-" + org.id[-6:])
    bad_inventory = hub.once("inv_not-a-live-token")
    assert bad_inventory.returncode == 1
    [line] = bad_inventory.stderr.splitlines()
    assert line.startswith("inventory-clusterprofiles: GET ") and ": 401" in line
    assert "INVENTORY_TOKEN" in line

    hub.kubeconfig = kube_apiserver.kubeconfig(hub.tmp_path / "bad.kubeconfig", "not-a-token")
    bad_hub = hub.once(org.token)
    assert bad_hub.returncode == 1
    [line] = bad_hub.stderr.splitlines()
    assert line.startswith(f"inventory-clusterprofiles: list clusterprofiles in {hub.namespace}: "
                           "401")
    assert hub.profiles() == {}


def test_a_follower_that_cannot_reach_the_inventory_says_so_and_keeps_trying(org, hub):
    org.cluster("patient-" + org.id[-6:])
    errors = hub.tmp_path / "unreachable.err"
    with open(errors, "w") as stderr:
        syncer = subprocess.Popen(
            hub.command(org.token), cwd=ROOT, env={**hub.env(org.token),
                                                   "INVENTORY_URL": f"http://127.0.0.1:{free_port()}"},
            stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        _until(lambda: len(errors.read_text().splitlines()) >= 3, 60, "three failed passes")
        assert syncer.poll() is None  # still running: no crash loop
    finally:
        syncer.terminate()
        assert syncer.wait(timeout=30) == 0
    lines = errors.read_text().splitlines()
    assert all(line.startswith("inventory-clusterprofiles: ") and "could not be reached" in line
               for line in lines), lines
    assert [line.rsplit("(", 1)[1] for line in lines[:3]] == [
        "again in 1 s)", "again in 2 s)", "again in 4 s)"]


def test_a_forced_delete_of_a_platform_or_an_organization_prunes_all_their_profiles(
        inventory, hub):
    # an unscoped reader token: an organization's own token goes with it
    token = Org(inventory).post("/tokens", {"name": f"syncer-{uuid.uuid4().hex[:6]}",
                                            "role": "reader"})["token"]
    doomed, kept = Org(inventory), Org(inventory)
    on_platform = [doomed.cluster(f"p{i}-{doomed.id[-6:]}")["name"] for i in range(2)]
    second = f"aks-{uuid.uuid4().hex[:8]}"
    doomed.post("/kubeplatforms", {"name": second, "organization": doomed.id, "title": "AKS",
                                   "control_plane": {"provider": "aks"},
                                   "infrastructure": {"cloud": {"provider": "azure"}}})
    in_org = [doomed.post("/kubeclusters", {"name": f"o{i}-{doomed.id[-6:]}", "platform": second,
                                            "environment": "staging", "version": "1.31.4"}
                          )["name"] for i in range(2)]
    survivor = kept.cluster("kept-" + kept.id[-6:])["name"]
    syncer = hub.follow(token)
    _until(lambda: {*on_platform, *in_org, survivor} <= set(hub.profiles()), 60,
           "the first reconcile")

    assert inventory.request("DELETE", f"/kubeplatforms/{doomed.platform}?force=true"
                             ).status == 204
    _until(lambda: not set(on_platform) & set(hub.profiles()), FOLLOW_WITHIN,
           "the forced platform delete's profiles pruned")
    assert set(in_org) <= set(hub.profiles())
    assert inventory.request("DELETE", f"/organizations/{doomed.id}?force=true").status == 204
    _until(lambda: not set(in_org) & set(hub.profiles()), FOLLOW_WITHIN,
           "the forced organization delete's profiles pruned")
    assert survivor in hub.profiles()
    hub.stop(syncer)
