"""A scan's schemas (schemas/scans.py): `scanned_on` within the calendar
and at most SCANNED_ON_AHEAD_SECONDS ahead of the service's clock; the
nodes' maps at most MAX_NODE_VALUES entries; no kube-proxy versions where
none runs; at most MAX_DEPRECATED_APIS requested APIs and MAX_FINDINGS
findings; releases such as `1.32` or empty; the optional parts' defaults."""
import time

import pytest
from marshmallow import ValidationError

from schemas.scans import (
    MAX_DEPRECATED_APIS,
    MAX_FINDINGS,
    MAX_NODE_VALUES,
    MAX_SCANNED_ON,
    SCANNED_ON_AHEAD_SECONDS,
    KubeClusterScanCreateSchema,
)

REQUEST = {"group": "policy", "version": "v1beta1", "resource": "podsecuritypolicies",
           "removed_release": "1.25", "requests": 3}
FINDING = {"kind": "PodSecurityPolicy", "api_version": "policy/v1beta1", "removed_in": "v1.25.0"}


def _load(**body):
    return KubeClusterScanCreateSchema().load(body)


def _refused(**body):
    with pytest.raises(ValidationError) as refused:
        _load(**body)
    return refused.value.messages


def test_scanned_on_may_be_a_little_ahead_of_the_clock_but_no_more():
    now = int(time.time())
    assert _load(scanned_on=now + SCANNED_ON_AHEAD_SECONDS - 5)["scanned_on"] > now
    messages = _refused(scanned_on=now + SCANNED_ON_AHEAD_SECONDS + 60)
    assert "ahead of the service's clock" in messages["scanned_on"][0]
    assert _load(scanned_on=0) == {"scanned_on": 0}
    assert "scanned_on" in _refused(scanned_on=-1)
    assert "scanned_on" in _refused(scanned_on=MAX_SCANNED_ON + 1)


def test_the_nodes_maps_hold_at_most_max_node_values_entries():
    full = {f"v1.30.{index}": 1 for index in range(MAX_NODE_VALUES)}
    assert _load(nodes={"count": 3, "kubelet_versions": full})["nodes"]["kubelet_versions"] \
        == full
    messages = _refused(nodes={"count": 3, "os_images": {**full, "one more": 1}})
    assert messages["nodes"]["os_images"] == [
        f"At most {MAX_NODE_VALUES} distinct values; {MAX_NODE_VALUES + 1} were given."]
    assert "kubelet_versions" in _refused(nodes={"count": 1, "kubelet_versions": {"": 1}})[
        "nodes"]
    assert "count" in _refused(nodes={"count": -1})["nodes"]


def test_no_kube_proxy_versions_where_the_scan_found_none_running():
    assert _load(nodes={"count": 1, "kube_proxy_found": False})["nodes"][
        "kube_proxy_found"] is False
    assert _load(nodes={"count": 1, "kube_proxy_found": True,
                        "kube_proxy_versions": {"v1.30.4": 1}})
    messages = _refused(nodes={"count": 1, "kube_proxy_found": False,
                               "kube_proxy_versions": {"v1.30.4": 1}})
    assert messages["nodes"] == [{"kube_proxy_versions": [
        "Must be empty (or absent) when kube_proxy_found is false: no kube-proxy runs."]}]


def test_at_most_so_many_requested_apis_and_findings():
    assert len(_load(deprecated_api_requests=[REQUEST] * MAX_DEPRECATED_APIS)[
        "deprecated_api_requests"]) == MAX_DEPRECATED_APIS
    assert _refused(deprecated_api_requests=[REQUEST] * (MAX_DEPRECATED_APIS + 1)) == {
        "deprecated_api_requests": [f"At most {MAX_DEPRECATED_APIS} deprecated APIs; "
                                    f"{MAX_DEPRECATED_APIS + 1} were given."]}
    assert len(_load(findings=[FINDING] * MAX_FINDINGS)["findings"]) == MAX_FINDINGS
    assert "findings" in _refused(findings=[FINDING] * (MAX_FINDINGS + 1))


@pytest.mark.parametrize("release, taken", [
    ("1.32", True), ("v1.25.0", True), ("", True), ("1.25.0", True),
    ("1", False), ("v1.x", False), ("1.25.0.1", False), ("latest", False)])
def test_a_removal_release_is_a_release_or_empty(release, taken):
    bodies = {"deprecated_api_requests": [{**REQUEST, "removed_release": release}],
              "findings": [{**FINDING, "removed_in": release}]}
    for part, body in bodies.items():
        if taken:
            assert _load(**{part: body})[part][0]
        else:
            assert part in _refused(**{part: body})


def test_the_optional_parts_of_a_request_and_a_finding_are_empty_when_absent():
    loaded = _load(deprecated_api_requests=[REQUEST], findings=[FINDING])
    assert loaded["deprecated_api_requests"][0]["subresource"] == ""
    assert {loaded["findings"][0][field] for field in (
        "source", "name", "namespace", "replacement")} == {""}


def test_the_server_is_a_kubernetes_version():
    assert _load(server={"git_version": "v1.30.4-eks-a737599"})["server"] == {
        "git_version": "v1.30.4-eks-a737599"}
    assert "server" in _refused(server={"git_version": "one-thirty"})
