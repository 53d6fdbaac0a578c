"""What a cluster's ClusterProfile says, and what differs from the one
held (inventory/clusterprofiles/profiles.py): no I/O."""
import pytest

from inventory.clusterprofiles.profiles import (
    MANAGER_LABEL,
    Settings,
    desired,
    object_patch,
    rfc3339,
    status_to_write,
    valid_label_key,
    valid_label_value,
)

NOW = 1_800_000_000
SETTINGS = Settings()


def _cluster(**fields):
    return {"id": "k8scl_1", "name": "payments", "platform": "eks-prod", "organization": "org_1",
            "environment": "production", "version": "1.31.4", "title": "", "labels": {},
            "endpoint": None, "observed": None,
            "support": {"status": "supported", "ends_on": "2027-01-01"},
            "readiness": {"target": "1.32", "status": "unknown", "checks": []}, **fields}


def _conditions(cluster, settings=SETTINGS, now=NOW):
    return {c["type"]: c for c in desired(cluster, {}, settings, now).status["conditions"]}


@pytest.mark.parametrize("key, valid", [
    ("team", True), ("app.kubernetes.io/name", True), ("a" * 63, True), ("a" * 64, False),
    ("Not A Key", False), ("-team", False), ("UPPER.example/x", False), ("x/", False),
    ("example.com/a_b.c-d", True)])
def test_label_keys_are_kubernetes_label_keys(key, valid):
    assert valid_label_key(key) is valid


@pytest.mark.parametrize("value, valid", [("", True), ("gold", True), ("a b", False),
                                          ("x" * 64, False), ("-x", False), ("A.b_c-9", True)])
def test_label_values_are_kubernetes_label_values(value, valid):
    assert valid_label_value(value) is valid


def test_labels_are_the_clusters_valid_ones_and_the_inventorys_own_under_the_prefix():
    wanted = desired(_cluster(labels={
        "team": "pay", "bad key!": "x", "ok": "bad value!",
        "cluster-inventory.io/environment": "spoofed", MANAGER_LABEL: "someone-else"}),
        {}, SETTINGS, NOW)
    assert wanted.labels == {"team": "pay", "cluster-inventory.io/environment": "production",
                             "cluster-inventory.io/platform": "eks-prod",
                             "cluster-inventory.io/organization": "org_1",
                             MANAGER_LABEL: "cluster-inventory"}
    assert wanted.spec == {"clusterManager": {"name": "cluster-inventory"},
                           "displayName": "payments"}


def test_control_plane_healthy_follows_the_newest_scans_age():
    assert _conditions(_cluster())["ControlPlaneHealthy"]["reason"] == "NeverScanned"
    fresh = _cluster(observed={"version": "v1.31.4", "scanned_on": NOW - 7200})
    assert _conditions(fresh)["ControlPlaneHealthy"]["status"] == "True"
    stale = _cluster(observed={"version": "v1.31.4", "scanned_on": NOW - 7201})
    condition = _conditions(stale)["ControlPlaneHealthy"]
    assert (condition["status"], condition["reason"]) == ("Unknown", "ScanStale")
    assert _conditions(stale, Settings(stale_after=7201))["ControlPlaneHealthy"]["status"] \
        == "True"


@pytest.mark.parametrize("readiness, status", [("passing", "True"), ("warning", "True"),
                                               ("error", "False"), ("unknown", "Unknown")])
def test_upgrade_ready_follows_readiness(readiness, status):
    cluster = _cluster(readiness={"target": "1.32", "status": readiness, "checks": [
        {"id": "kubelet-skew", "status": readiness}]})
    condition = _conditions(cluster)["UpgradeReady"]
    assert condition["status"] == status
    assert "1.32" in condition["message"]


def test_the_observed_version_wins_and_observed_properties_carry_their_time():
    cluster = _cluster(observed={"version": "v1.31.5", "scanned_on": NOW - 60},
                       endpoint="https://k.example.com")
    status = desired(cluster, {"eks-prod": "eks"}, SETTINGS, NOW).status
    assert status["version"] == {"kubernetes": "v1.31.5"}
    properties = {p["name"]: p for p in status["properties"]}
    assert properties["cluster.clusterset.k8s.io"] == {"name": "cluster.clusterset.k8s.io",
                                                       "value": "k8scl_1"}
    assert properties["cluster-inventory.io/provider"]["value"] == "eks"
    assert properties["cluster-inventory.io/observed-version"]["lastObservedTime"] == \
        rfc3339(NOW - 60)
    assert "lastObservedTime" not in properties["cluster-inventory.io/support-status"]
    assert status["accessProviders"] == [{"name": "inventory",
                                          "cluster": {"server": "https://k.example.com"}}]
    # no value, no property (the CRD refuses an empty one)
    assert "cluster-inventory.io/provider" not in {
        p["name"] for p in desired(cluster, {}, SETTINGS, NOW).status["properties"]}


def test_a_held_status_that_says_it_all_is_not_written_and_transitions_keep_their_time():
    wanted = desired(_cluster(), {}, SETTINGS, NOW)
    first = status_to_write(wanted.status, None, NOW)
    assert first is not None
    assert status_to_write(wanted.status, first, NOW + 100) is None
    scanned = desired(_cluster(observed={"version": "v1.31.4", "scanned_on": NOW + 90}), {},
                      SETTINGS, NOW + 100)
    second = status_to_write(scanned.status, first, NOW + 100)
    times = {c["type"]: c["lastTransitionTime"] for c in second["conditions"]}
    assert times == {"ControlPlaneHealthy": rfc3339(NOW + 100),  # flipped
                     "UpgradeReady": rfc3339(NOW)}  # held


def test_the_object_patch_names_only_what_differs():
    wanted = desired(_cluster(labels={"team": "a"}), {}, SETTINGS, NOW)
    held = {"metadata": {"labels": {**wanted.labels, "gone": "x"}},
            "spec": {**wanted.spec}}
    assert object_patch(wanted, held) == {"metadata": {"labels": {"gone": None}}}
    held["metadata"]["labels"].pop("gone")
    assert object_patch(wanted, held) is None
    held["spec"]["displayName"] = "old"
    assert object_patch(wanted, held) == {"spec": {"displayName": "payments"}}


def test_what_the_syncer_keeps_makes_the_same_profile_and_compares_the_same():
    from inventory.clusterprofiles.profiles import essentials, held_parts, held_status, new_object

    cluster = _cluster(labels={"team": "a"}, endpoint="https://k.example.com",
                       observed={"version": "v1.31.4", "minor": "1.31", "scanned_on": NOW - 5,
                                 "scan": "k8scs_1"},
                       readiness={"target": "1.32", "status": "error", "checks": [
                           {"id": "kubelet-skew", "status": "error", "summary": "x" * 500}]})
    assert desired(essentials(cluster), {}, SETTINGS, NOW) == desired(cluster, {}, SETTINGS, NOW)
    wanted = desired(cluster, {}, SETTINGS, NOW)
    status = status_to_write(wanted.status, None, NOW)
    answered = {**new_object(wanted, "fleet"), "status": status,
                "metadata": {"name": "payments", "uid": "u", "labels": wanted.labels,
                             "managedFields": [{"manager": "x"}]}}
    kept = held_parts(answered)
    assert "managedFields" not in kept["metadata"] and kept["metadata"]["uid"] == "u"
    assert status_to_write(wanted.status, held_status(kept), NOW + 1) is None
    assert object_patch(wanted, kept) is None
