"""The upgrade-readiness rules (inventory/core/readiness.py),
each at its boundaries: the version-skew policy's three minors (two below
1.25), removed in the target or the minor after, and no observation."""
import pytest

from inventory.core import readiness


def part(value, scanned_on=100, scan="k8scs_a"):
    return {"scanned_on": scanned_on, "scan": scan, "value": value}


def nodes(*versions):
    return part([{"value": version, "count": 2} for version in versions])


def check(assessed, check_id):
    (found,) = [c for c in assessed["checks"] if c["id"] == check_id]
    return found


def test_the_target_is_the_next_minor_after_the_recorded_version():
    assert readiness.target_of("1.31.2") == "1.32"
    assert readiness.target_of("v1.9-eks-1") == "1.10"
    assert readiness.target_of("1.31") == "1.32"


def test_with_no_observation_every_check_is_unknown_and_so_is_the_cluster():
    assessed = readiness.assess("1.31.2", {})
    assert [c["id"] for c in assessed["checks"]] == list(readiness.CHECKS)
    assert {c["status"] for c in assessed["checks"]} == {"unknown"}
    assert assessed == {"target": "1.32", "status": "unknown", "checks": assessed["checks"]}
    assert readiness.blocker_keys(assessed) == []
    assert readiness.observed_of({}) is None


@pytest.mark.parametrize("recorded, observed, status", [
    ("1.31.2", "v1.31.2-eks-1", "passing"),
    ("1.31", "v1.31.7-eks-1", "passing"),       # the recorded names no patch
    ("1.31.2", "v1.31.3-eks-1", "warning"),     # same minor, another patch
    ("1.31.2", "v1.30.2-eks-1", "error"),       # the inventory is wrong
    ("1.31.2", "v1.32.0", "error"),
])
def test_observed_version(recorded, observed, status):
    found = check(readiness.assess(recorded, {"server": part(observed)}), "observed-version")
    assert found["status"] == status
    minor = {"v1.31.2-eks-1": "1.31", "v1.31.7-eks-1": "1.31", "v1.31.3-eks-1": "1.31",
             "v1.30.2-eks-1": "1.30", "v1.32.0": "1.32"}[observed]
    assert found["details"] == ([] if status == "passing" else [
        {"recorded": "1.31", "observed": minor, "version": observed}])


@pytest.mark.parametrize("kubelet, status", [
    ("v1.32.0", "passing"),   # the target itself
    ("v1.31.4", "passing"),
    ("v1.29.1", "passing"),   # three minors older than 1.32: allowed
    ("v1.28.9", "error"),     # four: not
    ("v1.33.0", "error"),     # newer than the target's API server
])
def test_kubelet_skew_for_the_target_allows_three_minors_not_four(kubelet, status):
    observations = {"server": part("v1.33.0"), "kubelet_versions": nodes(kubelet)}
    found = check(readiness.assess("1.31.2", observations), "kubelet-skew")
    assert found["status"] == status, found
    if status == "error":
        minor = ".".join(kubelet.lstrip("v").split(".")[:2])
        assert found["details"] == [{"minor": minor, "versions": [kubelet], "nodes": 2}]


@pytest.mark.parametrize("kubelet, status", [
    ("v1.24.9", "error"),    # older than 1.25: two minors at most, 1.27 is three away
    ("v1.25.0", "passing"),  # 1.25 itself: three minors allowed
])
def test_a_kubelet_older_than_1_25_may_be_only_two_minors_older(kubelet, status):
    observations = {"kubelet_versions": nodes(kubelet)}
    assert check(readiness.assess("1.27.3", observations), "kubelet-skew")["status"] == status
    # ...and two minors older is fine for it
    assert check(readiness.assess("1.25.1", {"kubelet_versions": nodes("v1.24.9")}),
                 "kubelet-skew")["status"] == "passing"


def test_a_kubelet_newer_than_the_observed_server_is_an_error():
    observations = {"server": part("v1.30.1"), "kubelet_versions": nodes("v1.31.0")}
    assert check(readiness.assess("1.30.1", observations), "kubelet-skew")["status"] == "error"


def test_kube_proxy_skew_follows_the_same_rule():
    observations = {"kube_proxy_versions": nodes("v1.28.0-eksbuild.1")}
    found = check(readiness.assess("1.31.2", observations), "kube-proxy-skew")
    assert found["status"] == "error" and found["details"][0]["minor"] == "1.28"
    assert check(readiness.assess("1.31.2", {"kube_proxy_versions": nodes("v1.29.0")}),
                 "kube-proxy-skew")["status"] == "passing"
    assert check(readiness.assess("1.31.2", observations), "kubelet-skew")["status"] == "unknown"


def test_kube_proxy_found_to_run_nowhere_passes_and_says_so():
    assessed = readiness.assess("1.31.2", {"kube_proxy_versions": part(readiness.NO_KUBE_PROXY,
                                                                      scan="k8scs_none")})
    found = check(assessed, "kube-proxy-skew")
    assert found["status"] == "passing" and found["details"] == []
    assert found["summary"].startswith("No kube-proxy runs in the cluster (scan k8scs_none")
    assert "1.32" in found["summary"]


def test_skew_reported_without_a_readable_version_is_unknown_without_asking_for_a_run():
    for part_name, check_id in (("kube_proxy_versions", "kube-proxy-skew"),
                                ("kubelet_versions", "kubelet-skew")):
        found = check(readiness.assess("1.31.2", {part_name: part([], scan="k8scs_e")}), check_id)
        assert found["status"] == "unknown"
        assert "k8scs_e" in found["summary"] and "No scan has reported" not in found["summary"]
    never = check(readiness.assess("1.31.2", {}), "kube-proxy-skew")
    assert never["status"] == "unknown" and "No scan has reported" in never["summary"]


def test_a_scan_that_found_no_kube_proxy_keeps_none_and_one_that_did_not_say_keeps_its_map():
    none = readiness.merged({}, scan(100, "k8scs_1", nodes={"count": 2, "kube_proxy_found": False,
                                                           "kube_proxy_versions": {}}))
    assert none["kube_proxy_versions"]["value"] is readiness.NO_KUBE_PROXY
    unsaid = readiness.merged({}, scan(100, "k8scs_1", nodes={"count": 2,
                                                             "kube_proxy_versions": {}}))
    assert unsaid["kube_proxy_versions"]["value"] == []
    found = readiness.merged({}, scan(100, "k8scs_1", nodes={
        "count": 2, "kube_proxy_found": True, "kube_proxy_versions": {"v1.30.1": 2}}))
    assert found["kube_proxy_versions"]["value"] == [{"value": "v1.30.1", "count": 2}]
    # none found, then found: not the same values, so readiness is worked out again
    assert not readiness.same_values(none, found) and not readiness.same_values(none, unsaid)


def api(removed, requests=3, resource="flowschemas"):
    return {"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3", "resource": resource,
            "subresource": "", "removed_release": removed, "requests": requests}


@pytest.mark.parametrize("removed, status", [
    ("1.31", "error"),    # removed before the target
    ("1.32", "error"),    # removed in the target
    ("1.33", "warning"),  # in the minor after it
    ("1.34", "passing"),
    ("", "passing"),      # no removal planned
])
def test_requested_apis_are_graded_against_the_target_and_the_minor_after(removed, status):
    observations = {"deprecated_api_requests": part([api(removed)])}
    found = check(readiness.assess("1.31.2", observations), "deprecated-apis")
    assert found["status"] == status
    assert bool(found["details"]) == (status != "passing")


@pytest.mark.parametrize("removed, status", [("v1.32.0", "error"), ("v1.33.0", "warning"),
                                             ("v1.34.0", "passing")])
def test_findings_are_graded_alike(removed, status):
    observations = {"findings": part([{"api_version": "policy/v1beta1", "kind": "PodDisruptionBudget",
                                       "removed_in": removed, "count": 4}])}
    found = check(readiness.assess("1.31.2", observations), "deprecated-apis")
    assert found["status"] == status
    if status != "passing":
        assert found["details"][0]["findings"] == 4


def test_subresources_of_one_api_add_up_and_errors_come_first():
    observations = {"deprecated_api_requests": part([
        api("1.33", 7, "prioritylevelconfigurations"), api("1.32", 3), api("1.32", 5)])}
    found = check(readiness.assess("1.31.2", observations), "deprecated-apis")
    assert [(d["status"], d["requests"]) for d in found["details"]] == [("error", 8),
                                                                          ("warning", 7)]
    assert "1.32" in found["summary"] and "before upgrading" in found["summary"]


def test_the_cluster_status_is_its_worst_check():
    assert readiness.worst(["passing", "unknown", "warning"]) == "warning"
    assert readiness.worst(["passing", "unknown"]) == "unknown"
    assert readiness.worst(["warning", "error"]) == "error"
    assert readiness.worst([]) == "passing"


def test_blocker_keys_name_each_failing_check_and_key_once():
    observations = {"server": part("v1.29.1"), "kubelet_versions": nodes("v1.27.0", "v1.27.3"),
                    "deprecated_api_requests": part([api("1.32"), api("1.33", resource="x")])}
    keys = [readiness.blocker_of(key) for key in
            readiness.blocker_keys(readiness.assess("1.31.2", observations))]
    assert ("observed-version", "error", {"recorded": "1.31", "observed": "1.29"}) in keys
    assert keys.count(("kubelet-skew", "error", {"minor": "1.27"})) == 1
    assert ("deprecated-apis", "error", {"group": "flowcontrol.apiserver.k8s.io",
                                         "version": "v1beta3", "resource": "flowschemas",
                                         "removed_release": "1.32"}) in keys
    assert ("deprecated-apis", "warning", {"group": "flowcontrol.apiserver.k8s.io",
                                           "version": "v1beta3", "resource": "x",
                                           "removed_release": "1.33"}) in keys
    assert len(keys) == 4


def scan(scanned_on, scan_id, **parts):
    return {"scanned_on": scanned_on, "id": scan_id, **parts}


def test_a_newer_scan_replaces_the_parts_it_carries_and_an_older_one_nothing():
    first = readiness.merged({}, scan(100, "k8scs_1", server={"git_version": "v1.30.1"}))
    assert readiness.observed_of(first)["version"] == "v1.30.1"
    newer = readiness.merged(first, scan(200, "k8scs_2", server={"git_version": "v1.31.0"},
                                         findings=[]))
    assert newer["server"]["value"] == "v1.31.0" and newer["findings"]["value"] == []
    late = scan(150, "k8scs_3", server={"git_version": "v1.29.0"},
                nodes={"count": 1, "kubelet_versions": {"v1.29.0": 1}})
    after_late = readiness.merged(newer, late)
    assert after_late["server"] == newer["server"]  # older than the kept server part
    assert after_late["kubelet_versions"]["scan"] == "k8scs_3"  # the only nodes seen
    assert readiness.merged(after_late, late) is after_late  # the same again: nothing new
    # the same second: the later-recorded scan (a greater id) wins
    assert readiness.merged(first, scan(100, "k8scs_9", server={"git_version": "v1.30.2"})
                            )["server"]["value"] == "v1.30.2"


def test_same_values_whichever_scans_observed_them():
    """A newer scan of the same: the same values (readiness is kept as it
    is); any part changed, added or gone: not the same (it is worked out again)."""
    parts = {"server": {"git_version": "v1.30.1"},
             "nodes": {"count": 2, "kubelet_versions": {"v1.30.1": 2}}}
    first = readiness.merged({}, scan(100, "k8scs_1", **parts))
    again = readiness.merged(first, scan(200, "k8scs_2", **parts))
    assert again is not first and again["server"]["scan"] == "k8scs_2"
    assert readiness.same_values(first, again)
    other_kubelet = readiness.merged(first, scan(200, "k8scs_2", **{
        **parts, "nodes": {"count": 2, "kubelet_versions": {"v1.29.0": 2}}}))
    assert not readiness.same_values(first, other_kubelet)
    with_findings = readiness.merged(first, scan(200, "k8scs_2", **parts, findings=[]))
    assert not readiness.same_values(first, with_findings)
    assert not readiness.same_values(with_findings, first)
    assert readiness.same_values({}, {})


def test_findings_are_kept_counted_by_api_and_release():
    finding = {"api_version": "batch/v1beta1", "kind": "CronJob", "removed_in": "v1.25.0",
               "source": "pluto", "name": "n", "namespace": "ns", "replacement": "batch/v1"}
    kept = readiness.merged({}, scan(1, "k8scs_1", findings=[finding, {**finding, "name": "m"}]))
    assert kept["findings"]["value"] == [{"api_version": "batch/v1beta1", "kind": "CronJob",
                                          "removed_in": "v1.25.0", "count": 2}]
