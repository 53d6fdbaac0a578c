"""Scans that observe their cluster: the observations' rules, the cluster's
`observed` and `readiness` as scans and the recorded version change, the
fleet's blockers, and their events."""
import orjson
import pytest

from tests.conftest import assert_problem

SCAN = {
    "agent": {"name": "inventory-agent", "version": "1.0.0"},
    "server": {"git_version": "v1.30.4-eks-a737599"},
    "nodes": {"count": 12,
              "kubelet_versions": {"v1.30.4-eks-a737599": 9, "v1.27.16-eks-a737599": 2,
                                   "v1.26.15-eks-a737599": 1},
              "kube_proxy_versions": {"v1.30.4-eksbuild.2": 12},
              "container_runtimes": {"containerd://1.7.11": 12},
              "os_images": {"Amazon Linux 2": 12}},
    "deprecated_api_requests": [
        {"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3",
         "resource": "flowschemas", "removed_release": "1.32", "requests": 120},
        {"group": "", "version": "v1", "resource": "componentstatuses",
         "removed_release": "", "requests": 4}],
    "findings": [{"source": "pluto", "kind": "HorizontalPodAutoscaler",
                  "api_version": "autoscaling/v2beta2", "name": "web", "namespace": "shop",
                  "removed_in": "v1.26.0", "replacement": "autoscaling/v2"}],
}


def post_scan(client, cluster, scanned_on, **parts):
    body = {"scanned_on": scanned_on, **(parts or SCAN)}
    response = client.post(f"/kubeclusters/{cluster}/scans", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_a_scan_shows_what_it_observed_as_posted(client, inventory):
    cluster = inventory.cluster(version="1.30.4")
    scan = post_scan(client, cluster["name"], 1_700_000_000)
    for part in ("agent", "server", "nodes", "findings"):
        assert scan[part] == SCAN[part]
    # an optional field left out reads empty
    assert scan["deprecated_api_requests"] == [{**api, "subresource": ""}
                                               for api in SCAN["deprecated_api_requests"]]
    read = client.get(f"/kubeclusters/{cluster['name']}/scans/{scan['id']}").get_json()
    assert read == scan


def test_a_scans_agent_stored_as_a_map_before_reads_as_it_was(client, inventory, store):
    cluster = inventory.cluster(version="1.30.4")
    scan = post_scan(client, cluster["name"], 1_700_000_000)
    stored = store.scans.collection.find_one({"id": scan["id"]})
    assert orjson.loads(stored["_agent"]) == SCAN["agent"] and "agent" not in stored
    store.scans.collection.update_one({"_id": stored["_id"]}, {
        "$set": {"agent": {"name": "before", "version": "0.9"}}, "$unset": {"_agent": ""}})
    read = client.get(f"/kubeclusters/{cluster['name']}/scans/{scan['id']}").get_json()
    assert read["agent"] == {"name": "before", "version": "0.9"}


def test_a_cluster_reads_observed_and_readiness_from_its_newest_scan(client, inventory):
    cluster = inventory.cluster(version="1.30.4")
    assert cluster["observed"] is None
    assert cluster["readiness"]["status"] == "unknown"
    assert [c["id"] for c in cluster["readiness"]["checks"]] == [
        "observed-version", "kubelet-skew", "kube-proxy-skew", "deprecated-apis"]
    scan = post_scan(client, cluster["name"], 1_700_000_000)
    read = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    assert read["observed"] == {"version": "v1.30.4-eks-a737599", "minor": "1.30",
                                "scanned_on": 1_700_000_000, "scan": scan["id"]}
    readiness = read["readiness"]
    assert readiness["target"] == "1.31"
    statuses = {c["id"]: c["status"] for c in readiness["checks"]}
    # 1.26 kubelets are five minors behind 1.31; 1.27 four: both outside
    assert statuses == {"observed-version": "passing", "kubelet-skew": "error",
                        "kube-proxy-skew": "passing", "deprecated-apis": "error"}
    assert readiness["status"] == "error"


def test_a_scan_of_only_scanned_on_stays_valid_and_observes_nothing(client, inventory):
    cluster = inventory.cluster()
    scan = inventory.scan(cluster["name"], 5)
    assert {part: scan[part] for part in SCAN} == dict.fromkeys(SCAN)
    read = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    assert read["observed"] is None and read["readiness"]["status"] == "unknown"


@pytest.mark.parametrize("body, location", [
    ({"agent": {"name": "a"}}, "body.agent.version"),
    ({"agent": {"name": "", "version": "1"}}, "body.agent.name"),
    ({"agent": {"name": "a", "version": "1", "extra": 1}}, "body.agent.extra"),
    ({"server": {"git_version": "nope"}}, "body.server.git_version"),
    ({"server": {}}, "body.server.git_version"),
    ({"server": "v1.30.1"}, "body.server"),
    ({"nodes": {"kubelet_versions": {}}}, "body.nodes.count"),
    ({"nodes": {"count": -1}}, "body.nodes.count"),
    ({"nodes": {"count": 1, "kubelet_versions": {"v1.30.1": -1}}},
     "body.nodes.kubelet_versions.v1.30.1.value"),
    ({"nodes": {"count": 1, "os_images": {"x": 1.5}}}, "body.nodes.os_images.x.value"),
    ({"nodes": {"count": 1, "container_runtimes": {"": 1}}},
     "body.nodes.container_runtimes..key"),
    ({"nodes": {"count": 1, "kube_proxy_versions": {f"v1.{i}": 1 for i in range(101)}}},
     "body.nodes.kube_proxy_versions"),
    ({"nodes": {"count": 1, "gpus": {}}}, "body.nodes.gpus"),
    ({"nodes": {"count": 1, "kube_proxy_found": "no"}}, "body.nodes.kube_proxy_found"),
    ({"nodes": {"count": 1, "kube_proxy_found": 0}}, "body.nodes.kube_proxy_found"),
    ({"nodes": {"count": 1, "kube_proxy_found": False, "kube_proxy_versions": {"v1.30.1": 1}}},
     "body.nodes.kube_proxy_versions"),
    ({"deprecated_api_requests": [{"group": "", "version": "v1", "resource": "x",
                                   "removed_release": "1.x", "requests": 1}]},
     "body.deprecated_api_requests.0.removed_release"),
    ({"deprecated_api_requests": [{"group": "", "version": "v1", "resource": "x",
                                   "removed_release": "1.32", "requests": -1}]},
     "body.deprecated_api_requests.0.requests"),
    ({"deprecated_api_requests": [{"version": "v1", "resource": "x", "removed_release": "",
                                   "requests": 1}]}, "body.deprecated_api_requests.0.group"),
    ({"deprecated_api_requests": [{"group": "", "version": "v1", "resource": "x",
                                   "removed_release": "", "requests": 1}] * 201},
     "body.deprecated_api_requests"),
    ({"findings": [{"kind": "K", "api_version": "v1", "removed_in": "", "bogus": 1}]},
     "body.findings.0.bogus"),
    ({"findings": [{"kind": "K", "api_version": "v1"}]}, "body.findings.0.removed_in"),
    ({"findings": [{"kind": "K", "api_version": "v1", "removed_in": "soon"}]},
     "body.findings.0.removed_in"),
    ({"findings": [{"kind": "K", "api_version": "v1", "removed_in": ""}] * 501},
     "body.findings"),
    ({"observations": {}}, "body.observations"),
])
def test_bad_observations_are_422_at_their_location(client, inventory, body, location):
    cluster = inventory.cluster()
    response = client.post(f"/kubeclusters/{cluster['name']}/scans", json=body)
    assert_problem(response, 422, location)
    assert client.get(f"/kubeclusters/{cluster['name']}/scans").get_json()["results"] == []


def test_a_scan_over_256_kib_is_413_and_records_nothing(client, inventory):
    cluster = inventory.cluster()
    finding = {"kind": "K", "api_version": "v1", "removed_in": "", "name": "n" * 253,
               "namespace": "x" * 63, "replacement": "r" * 253}
    body = {"findings": [finding] * 500}  # within the count, over the bytes
    response = client.post(f"/kubeclusters/{cluster['name']}/scans", json=body)
    assert_problem(response, 413)
    assert client.get(f"/kubeclusters/{cluster['name']}/scans").get_json()["results"] == []
    # the same shape under the bound is taken
    assert client.post(f"/kubeclusters/{cluster['name']}/scans",
                       json={"findings": [finding] * 100}).status_code == 201


def test_only_the_newest_scans_keep_their_observations(client, inventory):
    """A cluster's scans keep what they observed until OBSERVED_SCANS_SPARE
    more have joined the OBSERVED_SCANS_KEPT newest; then all but those
    newest let it go, in one write. A scan posted late (behind what the
    cluster holds) keeps none; one that observed nothing counts for nothing."""
    from inventory.core.caps import OBSERVED_SCANS_KEPT, OBSERVED_SCANS_SPARE
    cluster = inventory.cluster()

    def kept():
        scans = client.get(f"/kubeclusters/{cluster['name']}/scans").get_json()["results"]
        assert all(s["agent"] == SCAN["agent"] for s in scans)  # every scan keeps its agent
        return [s["scanned_on"] for s in scans if s["server"] is not None]
    expected, t = [], 0
    for _ in range(3 * OBSERVED_SCANS_SPARE + 1):
        t += 100
        post_scan(client, cluster["name"], t)
        expected.append(t)
        if len(expected) >= OBSERVED_SCANS_KEPT + OBSERVED_SCANS_SPARE:
            expected = expected[-OBSERVED_SCANS_KEPT:]
        assert kept() == expected
        assert len(expected) < OBSERVED_SCANS_KEPT + OBSERVED_SCANS_SPARE
    # late (behind what the cluster holds): it keeps nothing, and its answer says so
    late = post_scan(client, cluster["name"], 50)
    assert late["server"] is None and late["agent"] == SCAN["agent"]
    assert kept() == expected
    # scans that observed nothing (an agent only) neither count nor take anything away
    for _ in range(2 * OBSERVED_SCANS_SPARE):
        assert client.post(f"/kubeclusters/{cluster['name']}/scans", json={
            "scanned_on": t + 1, "agent": SCAN["agent"]}).status_code == 201
    assert kept() == expected
    # the cluster's observations are its own: they stay with the newest
    read = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    assert read["observed"]["scanned_on"] == t


def readiness_of(client, cluster):
    return client.get(f"/kubeclusters/{cluster}").get_json()["readiness"]


def test_a_newer_scan_updates_readiness_and_an_older_one_posted_late_does_not(client, inventory):
    cluster = inventory.cluster(version="1.30.4")
    post_scan(client, cluster["name"], 1000)
    assert readiness_of(client, cluster["name"])["status"] == "error"
    clean = {**SCAN, "nodes": {"count": 3, "kubelet_versions": {"v1.30.4": 3},
                               "kube_proxy_versions": {"v1.30.4": 3}},
             "deprecated_api_requests": [], "findings": []}
    newer = post_scan(client, cluster["name"], 2000, **clean)
    assert readiness_of(client, cluster["name"])["status"] == "passing"
    before = client.get(f"/kubeclusters/{cluster['name']}")
    post_scan(client, cluster["name"], 1500)  # the bad one again, but older
    after = client.get(f"/kubeclusters/{cluster['name']}")
    assert after.get_json()["readiness"]["status"] == "passing"
    assert after.get_json()["observed"]["scan"] == newer["id"]
    assert after.get_json() == before.get_json()
    # a newer scan that carries one part replaces that part only
    post_scan(client, cluster["name"], 3000, findings=SCAN["findings"])
    checks = {c["id"]: c["status"] for c in readiness_of(client, cluster["name"])["checks"]}
    assert checks == {"observed-version": "passing", "kubelet-skew": "passing",
                      "kube-proxy-skew": "passing", "deprecated-apis": "error"}


# Clusters without kube-proxy (the contract's amendment): a scan that looked
# and found none is not a scan that did not say.

CLEAN = {**SCAN, "deprecated_api_requests": [], "findings": []}


def _without_kube_proxy(kube_proxy_found, versions=None):
    nodes = {"count": 3, "kubelet_versions": {"v1.30.4": 3}}
    if kube_proxy_found is not None:
        nodes["kube_proxy_found"] = kube_proxy_found
    if versions is not None:
        nodes["kube_proxy_versions"] = versions
    return {**CLEAN, "nodes": nodes}


def _check(client, name, check_id):
    [check] = [c for c in readiness_of(client, name)["checks"] if c["id"] == check_id]
    return check


def test_a_scan_that_found_no_kube_proxy_reads_passing_and_the_cluster_can_pass(client, inventory):
    cluster = inventory.cluster(version="1.30.4")
    scan = post_scan(client, cluster["name"], 1000, **_without_kube_proxy(False, {}))
    assert scan["nodes"]["kube_proxy_found"] is False  # shown as posted
    check = _check(client, cluster["name"], "kube-proxy-skew")
    assert check["status"] == "passing" and check["details"] == []
    assert "No kube-proxy runs" in check["summary"] and scan["id"] in check["summary"]
    assert "run the agent" not in check["summary"]
    assert readiness_of(client, cluster["name"])["status"] == "passing"
    # without the versions map at all, the same
    other = inventory.cluster(version="1.30.4")
    post_scan(client, other["name"], 1000, **_without_kube_proxy(False))
    assert readiness_of(client, other["name"])["status"] == "passing"
    listed = client.get("/kubeclusters", query_string={
        "filter": 'readiness.status="passing"'}).get_json()["results"]
    assert {cluster["name"], other["name"]} <= {c["name"] for c in listed}


@pytest.mark.parametrize("kube_proxy_found, versions", [
    (None, None),  # not reported: the part was never observed
    (None, {}),  # an older agent's empty map: nothing says none runs
    (True, {}),  # found, but its version could not be read
])
def test_a_scan_that_does_not_say_none_runs_leaves_kube_proxy_skew_unknown(
        client, inventory, kube_proxy_found, versions):
    cluster = inventory.cluster(version="1.30.4")
    post_scan(client, cluster["name"], 1000, **_without_kube_proxy(kube_proxy_found, versions))
    check = _check(client, cluster["name"], "kube-proxy-skew")
    assert check["status"] == "unknown"
    assert readiness_of(client, cluster["name"])["status"] == "unknown"
    if versions is None:
        assert "No scan has reported" in check["summary"]
    else:  # it was reported: the summary does not ask for a run that just happened
        assert "No scan has reported" not in check["summary"] and "read no" in check["summary"]


def test_kube_proxy_found_again_after_none_is_judged_on_its_versions(client, inventory):
    cluster = inventory.cluster(version="1.30.4")
    post_scan(client, cluster["name"], 1000, **_without_kube_proxy(False))
    assert _check(client, cluster["name"], "kube-proxy-skew")["status"] == "passing"
    post_scan(client, cluster["name"], 2000, **_without_kube_proxy(True, {"v1.26.1": 3}))
    assert _check(client, cluster["name"], "kube-proxy-skew")["status"] == "error"
    post_scan(client, cluster["name"], 1500, **_without_kube_proxy(False))  # older: no change
    assert _check(client, cluster["name"], "kube-proxy-skew")["status"] == "error"
    post_scan(client, cluster["name"], 3000, **_without_kube_proxy(False))
    assert _check(client, cluster["name"], "kube-proxy-skew")["status"] == "passing"


def test_a_patch_of_version_recomputes_readiness(client, inventory):
    cluster = inventory.cluster(version="1.30.4")
    post_scan(client, cluster["name"], 1000, server=SCAN["server"],
              deprecated_api_requests=SCAN["deprecated_api_requests"])
    readiness = readiness_of(client, cluster["name"])
    assert readiness["target"] == "1.31"
    assert {c["id"]: c["status"] for c in readiness["checks"]}["deprecated-apis"] == "warning"
    changed = client.patch(f"/kubeclusters/{cluster['name']}", json={"version": "1.31.0"})
    assert changed.status_code == 200
    readiness = changed.get_json()["readiness"]
    assert readiness["target"] == "1.32" and readiness["status"] == "error"
    checks = {c["id"]: c["status"] for c in readiness["checks"]}
    assert checks["observed-version"] == "error"  # the server still says 1.30
    assert checks["deprecated-apis"] == "error"  # flowschemas v1beta3 go in 1.32
    assert readiness_of(client, cluster["name"]) == readiness
    listed = client.get("/kubeclusters", query_string={
        "filter": f'name="{cluster["name"]}" AND readiness.status="error"'}).get_json()
    assert [c["name"] for c in listed["results"]] == [cluster["name"]]
    # a change of another field leaves it as it is
    same = client.patch(f"/kubeclusters/{cluster['name']}", json={"title": "t"}).get_json()
    assert same["readiness"] == readiness


def test_readiness_status_and_observed_version_filter(client, inventory):
    blocked = inventory.cluster(version="1.30.4")
    clean = inventory.cluster(version="1.29.1")
    never = inventory.cluster(version="1.29.1")
    post_scan(client, blocked["name"], 10)
    post_scan(client, clean["name"], 10, server={"git_version": "v1.29.1"},
              nodes={"count": 1, "kubelet_versions": {"v1.29.1": 1},
                     "kube_proxy_versions": {"v1.29.1": 1}}, deprecated_api_requests=[])

    def names(flt):
        response = client.get("/kubeclusters", query_string={"filter": flt})
        assert response.status_code == 200, response.get_json()
        return {c["name"] for c in response.get_json()["results"]}
    assert names('readiness.status="error"') == {blocked["name"]}
    assert names('readiness.status="passing"') == {clean["name"]}
    assert names('readiness.status="unknown"') == {never["name"]}
    assert names('observed.version<"1.30"') == {clean["name"]}
    assert names('observed.version="1.30*"') == {blocked["name"]}
    assert names("NOT observed.version:*") == {never["name"]}
    assert_problem(client.get("/kubeclusters", query_string={
        "filter": 'observed.version<"soon"'}), 422, "query.filter")


def test_a_summary_counts_by_readiness_status_and_observed_minor(client, inventory):
    platform = inventory.platform()["name"]
    for version, scanned in (("1.30.4", True), ("1.30.4", True), ("1.29.1", False)):
        cluster = inventory.cluster(platform=platform, version=version)
        if scanned:
            post_scan(client, cluster["name"], 10)
    summary = client.get("/kubeclusters:summary", query_string={
        "group_by": "readiness.status, observed.minor",
        "filter": f'platform="{platform}"'}).get_json()
    assert summary["groups"] == [
        {"key": {"readiness.status": "error", "observed.minor": "1.30"}, "count": 2},
        {"key": {"readiness.status": "unknown", "observed.minor": None}, "count": 1}]
    assert summary["total"] == 3


def test_blockers_count_clusters_by_failing_check_and_key(client, inventory):
    platform = inventory.platform()["name"]
    for i in range(3):
        cluster = inventory.cluster(platform=platform, version="1.30.4")
        scan = dict(SCAN)
        if i == 2:  # one cluster's kubelets are all current
            scan["nodes"] = {"count": 1, "kubelet_versions": {"v1.30.4": 1},
                             "kube_proxy_versions": {"v1.30.4": 1}}
        post_scan(client, cluster["name"], 10, **scan)
    inventory.cluster(platform=platform, version="1.31.0")  # never scanned: no blockers
    inventory.cluster(version="1.30.4")  # another platform: filtered out
    response = client.get("/kubeclusters:blockers", query_string={
        "filter": f'platform="{platform}"'})
    assert response.status_code == 200
    body = response.get_json()
    assert body["$schema"].endswith("/schemas/KubeClusterBlockers.json")
    assert body["total"] == 4
    assert body["blockers"] == [
        {"check": "deprecated-apis", "status": "error", "clusters": 3,
         "key": {"api_version": "autoscaling/v2beta2", "kind": "HorizontalPodAutoscaler",
                 "removed_in": "v1.26.0"}},
        {"check": "deprecated-apis", "status": "warning", "clusters": 3,
         "key": {"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3",
                 "resource": "flowschemas", "removed_release": "1.32"}},
        {"check": "kubelet-skew", "status": "error", "clusters": 2, "key": {"minor": "1.26"}},
        {"check": "kubelet-skew", "status": "error", "clusters": 2, "key": {"minor": "1.27"}}]
    assert_problem(client.get("/kubeclusters:blockers", query_string={"filter": "bogus=1"}),
                   422, "query.filter")
    assert_problem(client.get("/kubeclusters:blockers", query_string={"limit": 5}), 422)


def test_blockers_count_a_cluster_whose_keys_were_stored_as_a_list_before(
        client, inventory, store):
    platform = inventory.platform()["name"]
    names = [inventory.cluster(platform=platform, version="1.30.4")["name"] for _ in range(2)]
    for name in names:
        post_scan(client, name, 10)
    asked = {"filter": f'platform="{platform}"'}
    now = client.get("/kubeclusters:blockers", query_string=asked).get_json()["blockers"]
    stored = store.clusters.collection.find_one({"_id": names[0]})["_blockers"]
    assert isinstance(stored, str) and now  # the sorted keys, as one JSON string
    store.clusters.collection.update_one({"_id": names[0]},
                                         {"$set": {"_blockers": orjson.loads(stored)}})
    assert client.get("/kubeclusters:blockers", query_string=asked).get_json()["blockers"] == now


def test_scope_bounds_observed_readiness_and_blockers(app, client, inventory):
    from tests.conftest import client_with
    mine, theirs = inventory.org()["id"], inventory.org()["id"]
    my_cluster = inventory.cluster(platform=inventory.platform(org=mine)["name"],
                                   version="1.30.4")
    their_cluster = inventory.cluster(platform=inventory.platform(org=theirs)["name"],
                                      version="1.30.4")
    post_scan(client, their_cluster["name"], 10)
    post_scan(client, my_cluster["name"], 10, server=SCAN["server"],
              deprecated_api_requests=[])
    token = client.post("/tokens", json={"name": "t", "role": "reader",
                                         "organization": mine}).get_json()["token"]
    reader = client_with(app, token)
    assert reader.get(f"/kubeclusters/{their_cluster['name']}").status_code == 404
    assert reader.get(f"/kubeclusters/{their_cluster['name']}/scans").status_code == 404
    listed = reader.get("/kubeclusters", query_string={
        "filter": 'readiness.status="error" OR observed.version:*'}).get_json()["results"]
    assert [c["name"] for c in listed] == [my_cluster["name"]]
    assert reader.get("/kubeclusters:blockers").get_json() == {
        "$schema": reader.get("/kubeclusters:blockers").get_json()["$schema"],
        "blockers": [], "total": 1}
    summary = reader.get("/kubeclusters:summary",
                         query_string={"group_by": "readiness.status"}).get_json()
    assert summary["total"] == 1


def events_of(client, cluster):
    return [e for e in client.get("/events", query_string={
        "filter": f'subject="/kubeclusters/{cluster}"', "limit": 100}).get_json()["results"]]


def test_a_scan_that_changes_observed_or_readiness_status_is_a_cluster_update(client, inventory):
    cluster = inventory.cluster(version="1.30.4")
    post_scan(client, cluster["name"], 100)
    current = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    (created, updated) = events_of(client, cluster["name"])
    assert updated["type"] == "kubecluster.updated"
    fields = updated["changes"]
    assert fields["readiness.status"] == {"from": "unknown", "to": "error"}
    assert fields["observed"] == {"from": None, "to": {"version": "v1.30.4-eks-a737599",
                                                      "minor": "1.30"}}
    assert set(fields) == {"observed", "readiness.status"}
    assert updated["object"]["readiness"]["status"] == "error"
    # the record as it was: its checks (answered as their stored text) stored as values
    assert updated["object"]["readiness"] == current["readiness"]
    assert [check["id"] for check in updated["object"]["readiness"]["checks"]] == [
        "observed-version", "kubelet-skew", "kube-proxy-skew", "deprecated-apis"]
    assert updated["object"]["observed"]["scanned_on"] == 100
    # the same observations again, newer: which scan observed it moves, silently
    count = len(events_of(client, cluster["name"]))
    post_scan(client, cluster["name"], 200)
    assert len(events_of(client, cluster["name"])) == count
    # the server observed on another version: an event, with what changed
    post_scan(client, cluster["name"], 250, server={"git_version": "v1.30.5"})
    last = events_of(client, cluster["name"])[-1]
    assert last["changes"] == {"observed.version": {"from": "v1.30.4-eks-a737599",
                                                    "to": "v1.30.5"}}
    # only request counts change, observed not (no server): no event
    count = len(events_of(client, cluster["name"]))
    post_scan(client, cluster["name"], 300, deprecated_api_requests=[
        {**SCAN["deprecated_api_requests"][0], "requests": 500}])
    assert len(events_of(client, cluster["name"])) == count
    # an older scan posted late changes nothing: no event
    post_scan(client, cluster["name"], 50)
    assert len(events_of(client, cluster["name"])) == count


def test_a_cluster_stored_before_readiness_reads_unknown_and_is_backfilled(
        app, client, inventory, store):
    cluster = inventory.cluster(version="1.30.4")
    store.clusters.collection.update_one(
        {"_id": cluster["name"]}, {"$unset": {"readiness": "", "observed": "", "_blockers": "",
                                              "_observations": "", "_checks": "",
                                              "_observed_version_key": ""}})
    read = client.get(f"/kubeclusters/{cluster['name']}").get_json()
    assert read["observed"] is None
    assert read["readiness"]["status"] == "unknown" and read["readiness"]["target"] == "1.31"
    assert client.get("/kubeclusters:blockers").get_json()["total"] >= 1
    assert store.clusters.add_missing_readiness() == 1
    assert store.clusters.add_missing_readiness() == 0
    listed = client.get("/kubeclusters", query_string={
        "filter": 'readiness.status="unknown"'}).get_json()["results"]
    assert cluster["name"] in [c["name"] for c in listed]
    post_scan(client, cluster["name"], 10)
    assert readiness_of(client, cluster["name"])["status"] == "error"


def test_the_feed_and_a_webhook_follow_readiness_status_changes(client, inventory, store):
    cluster = inventory.cluster(version="1.30.4")
    other = inventory.cluster(version="1.30.4")
    post_scan(client, cluster["name"], 100)  # unknown -> error
    post_scan(client, cluster["name"], 200, server={"git_version": "v1.30.9"})  # not the status
    client.patch(f"/kubeclusters/{other['name']}", json={"title": "t"})
    flt = 'type="kubecluster.updated" AND changed="readiness.status"'
    found = client.get("/events", query_string={"filter": flt}).get_json()["results"]
    assert [e["subject"] for e in found] == [f"/kubeclusters/{cluster['name']}"]
    assert found[0]["changes"]["readiness.status"] == {"from": "unknown", "to": "error"}
    followed = client.get("/events", query_string={"filter": 'changed="observed.version"'})
    assert len(followed.get_json()["results"]) == 1
    # a webhook takes the same filter
    made = client.post("/webhooks", json={"url": "https://hooks.example.com/inventory",
                                          "filter": flt})
    assert made.status_code == 201, made.get_json()
    assert_problem(client.get("/events", query_string={"filter": "changed=1"}), 422,
                   "query.filter")
