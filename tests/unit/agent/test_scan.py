"""The scan body from what was read (inventory.agent.scan), without I/O:
kube-proxy's version from its DaemonSet, the deprecated APIs joined with
their request counts, the nodes' tallies; and where the agent's
requirements are pinned."""
import pathlib
import re

import pytest

from inventory.agent import bounds, scan
from inventory.agent.failures import ClusterError
from inventory.agent.scan import (
    deprecated_api_requests,
    image_tag,
    kube_proxy_of_daemonset,
    kube_proxy_of_pods,
    kube_proxy_versions,
    nodes_part,
)
from tests.support.kube_api import daemonset

ROOT = pathlib.Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("image, tag", [
    ("registry.k8s.io/kube-proxy:v1.31.2", "v1.31.2"),
    ("602401143452.dkr.ecr.eu-west-1.amazonaws.com/eks/kube-proxy:v1.30.0-minimal-eksbuild.3",
     "v1.30.0-minimal-eksbuild.3"),
    ("mcr.microsoft.com/oss/kubernetes/kube-proxy:v1.29.4-hotfix.20240603", "v1.29.4-hotfix.20240603"),
    ("registry.k8s.io/kube-proxy:v1.31.2@sha256:" + "a" * 64, "v1.31.2"),
    ("localhost:5000/kube-proxy:v1.28.1", "v1.28.1"),
    ("localhost:5000/kube-proxy", ""),  # a registry's port is not a tag
    ("registry.k8s.io/kube-proxy@sha256:" + "a" * 64, ""),
    ("kube-proxy", ""),
])
def test_the_image_tag_is_what_follows_the_last_colon_of_the_last_path_part(image, tag):
    assert image_tag(image) == tag


def test_kube_proxy_counts_the_nodes_on_the_daemonsets_current_template():
    assert kube_proxy_versions(daemonset("registry.k8s.io/kube-proxy:v1.31.2", updated=12,
                                         desired=12)) == {"v1.31.2": 12}
    # mid-rollout: only the updated nodes are known to run this image
    assert kube_proxy_versions(daemonset("registry.k8s.io/kube-proxy:v1.31.2", updated=4,
                                         desired=12)) == {"v1.31.2": 4}


def test_kube_proxy_is_found_by_its_container_name_among_others():
    found = daemonset("registry.k8s.io/kube-proxy:v1.30.6")
    found["spec"]["template"]["spec"]["containers"].insert(
        0, {"name": "sidecar", "image": "example.com/sidecar:9.9"})
    assert kube_proxy_versions(found) == {"v1.30.6": 3}


@pytest.mark.parametrize("found", [
    None,  # no DaemonSet
    daemonset("registry.k8s.io/kube-proxy@sha256:" + "b" * 64),  # no tag
    daemonset(updated=0),  # no node runs it yet
    {"metadata": {}},  # nothing where a DaemonSet has it
])
def test_no_kube_proxy_version_when_the_daemonset_does_not_say_one(found):
    assert kube_proxy_versions(found) == {}


def test_the_nodes_tallies_count_each_value_and_skip_what_a_node_leaves_empty():
    infos = [("v1.30.1", "containerd://1.7.2", "Ubuntu 22.04.4 LTS"),
             ("v1.30.1", "", "Ubuntu 22.04.4 LTS"), ("", "cri-o://1.30.1", "")]
    assert nodes_part(infos, None) == {
        "count": 3, "kubelet_versions": {"v1.30.1": 2}, "kube_proxy_versions": {},
        "container_runtimes": {"containerd://1.7.2": 1, "cri-o://1.30.1": 1},
        "os_images": {"Ubuntu 22.04.4 LTS": 2}}


def test_past_the_inventorys_bounds_the_most_common_values_are_kept():
    infos = ([("v1.30.1", "containerd://1.7.2", "Ubuntu")] * 3
             + [(f"v1.30.1-custom.{i}", "", "x" * (scan.MAX_NODE_VALUE + 1))
                for i in range(scan.MAX_NODE_VALUES + 20)])
    nodes = nodes_part(infos, None)
    assert nodes["count"] == len(infos)
    assert len(nodes["kubelet_versions"]) == scan.MAX_NODE_VALUES
    assert nodes["kubelet_versions"]["v1.30.1"] == 3
    assert nodes["os_images"] == {"Ubuntu": 3}  # a value longer than the inventory takes


def test_past_the_inventorys_bound_the_deprecated_apis_removed_soonest_are_kept(monkeypatch):
    monkeypatch.setattr(scan, "MAX_DEPRECATED_APIS", 3)
    text = "".join(f'apiserver_requested_deprecated_apis{{group="g",removed_release="{release}",'
                   f'resource="r{i}",subresource="",version="v1beta1"}} 1\n'
                   for i, release in enumerate(["", "1.40", "1.9", "1.32", "", "1.25"]))
    kept = deprecated_api_requests(text)
    assert sorted(api["removed_release"] for api in kept) == ["1.25", "1.32", "1.9"]


def test_the_agents_bounds_are_the_inventorys():
    from schemas import scans

    if not hasattr(scans, "MAX_NODE_VALUES"):
        pytest.skip("this app's scans take no observations yet (issue 35, item 1)")
    assert (scan.MAX_NODE_VALUES, scan.MAX_NODE_VALUE, scan.MAX_DEPRECATED_APIS) == \
        (scans.MAX_NODE_VALUES, scans.MAX_NODE_VALUE, scans.MAX_DEPRECATED_APIS)


def test_a_cluster_with_no_nodes_has_a_count_of_zero():
    assert nodes_part([], None)["count"] == 0


def test_deprecated_apis_without_requests_counted_have_zero_requests_and_none_is_an_empty_list():
    assert deprecated_api_requests("") == []
    text = ('# TYPE apiserver_requested_deprecated_apis gauge\n'
            'apiserver_requested_deprecated_apis{group="",removed_release="1.38",resource="endpoints",'
            'subresource="",version="v1"} 1\n')
    assert deprecated_api_requests(text) == [
        {"group": "", "version": "v1", "resource": "endpoints", "subresource": "",
         "removed_release": "1.38", "requests": 0}]


def test_requests_of_other_apis_and_lookalike_families_are_not_counted():
    text = ('# TYPE apiserver_requested_deprecated_apis gauge\n'
            'apiserver_requested_deprecated_apis{group="batch",removed_release="1.25",'
            'resource="cronjobs",subresource="",version="v1beta1"} 1\n'
            '# TYPE apiserver_request_total counter\n'
            'apiserver_request_total{code="200",group="batch",resource="cronjobs",subresource="",'
            'verb="GET",version="v1"} 1000\n'
            'apiserver_request_total{code="200",group="batch",resource="cronjobs",subresource="",'
            'verb="GET",version="v1beta1"} 6\n'
            '# TYPE apiserver_request_total_other counter\n'
            'apiserver_request_total_other{group="batch",resource="cronjobs",subresource="",'
            'version="v1beta1"} 50\n')
    assert deprecated_api_requests(text) == [
        {"group": "batch", "version": "v1beta1", "resource": "cronjobs", "subresource": "",
         "removed_release": "1.25", "requests": 6}]


def _kube_proxy(image="registry.k8s.io/kube-proxy:v1.31.2", updated=3, desired=3):
    return {"containers": [{"name": "kube-proxy", "image": image}],
            "updatedNumberScheduled": updated, "desiredNumberScheduled": desired}


def test_a_daemonset_scheduled_on_no_node_runs_no_kube_proxy():
    """kube-proxy turned off by a node selector that matches nothing (as
    when Cilium replaces it): not a version, and not `{}` (unreadable)."""
    assert kube_proxy_of_daemonset(_kube_proxy(updated=0, desired=0)) is None
    assert kube_proxy_of_daemonset(_kube_proxy(updated=0, desired=3)) == {}
    assert kube_proxy_of_daemonset(_kube_proxy()) == {"v1.31.2": 3}


def test_static_kube_proxy_pods_count_one_node_each_and_none_means_none_runs():
    def pod(image, phase="Running"):
        return {"containers": [{"name": "kube-proxy", "image": image}], "phase": phase}
    pods = [pod("gke.gcr.io/kube-proxy-amd64:v1.30.5-gke.1014001")] * 3 + [
        pod("gke.gcr.io/kube-proxy-amd64:v1.29.8-gke.1"), pod("x@sha256:" + "c" * 64),
        pod("gke.gcr.io/kube-proxy-amd64:v1.28.0", phase="Failed")]
    assert kube_proxy_of_pods(pods) == (True, {"v1.30.5-gke.1014001": 3, "v1.29.8-gke.1": 1})
    assert kube_proxy_of_pods([]) == (False, {})
    assert kube_proxy_of_pods([pod("a:v1.30.0", phase="Succeeded")]) == (False, {})


def test_the_nodes_part_says_kube_proxy_found_false_only_when_none_runs():
    none = nodes_part([("v1.30.1", "", "")], (False, {}))
    assert none["kube_proxy_found"] is False and none["kube_proxy_versions"] == {}
    found = nodes_part([("v1.30.1", "", "")], (True, {"v1.30.1": 1}))
    assert "kube_proxy_found" not in found and found["kube_proxy_versions"] == {"v1.30.1": 1}


def test_past_the_distinct_values_bound_new_values_are_counted_in_count_only(monkeypatch):
    monkeypatch.setattr(bounds, "MAX_DISTINCT_VALUES", 5)
    nodes = nodes_part([(f"v1.30.{i}", "", "") for i in range(8)] + [("v1.30.0", "", "")],
                       (True, {}))
    assert nodes["count"] == 9
    assert nodes["kubelet_versions"] == {"v1.30.0": 2, **{f"v1.30.{i}": 1 for i in range(1, 5)}}


@pytest.mark.parametrize("value", ["NaN", "+Inf", "-1", "1e300"])
def test_a_sample_that_is_not_a_count_is_a_cluster_failure_naming_it(value):
    text = ('apiserver_requested_deprecated_apis{group="batch",removed_release="1.25",'
            'resource="cronjobs",subresource="",version="v1beta1"} 1\n'
            f'apiserver_request_total{{group="batch",resource="cronjobs",version="v1beta1"}} {value}\n')
    with pytest.raises(ClusterError, match="apiserver_request_total of batch/v1beta1/cronjobs .* "
                                           "not a count"):
        deprecated_api_requests(text)


def test_a_removed_release_that_is_not_a_release_is_a_cluster_failure():
    text = ('apiserver_requested_deprecated_apis{group="batch",removed_release="soon",'
            'resource="cronjobs",subresource="",version="v1beta1"} 1\n')
    with pytest.raises(ClusterError, match="removed_release"):
        deprecated_api_requests(text)


def test_metrics_are_parsed_a_batch_at_a_time_with_the_same_counts(monkeypatch):
    text = "".join(f'apiserver_request_total{{group="batch",resource="cronjobs",verb="{verb}",'
                   f'version="v1beta1"}} 2\n' for verb in ("GET", "LIST", "WATCH") * 50)
    text += ('apiserver_requested_deprecated_apis{group="batch",removed_release="1.25",'
             'resource="cronjobs",subresource="",version="v1beta1"} 1\n')
    whole = deprecated_api_requests(text)
    monkeypatch.setattr(scan, "METRICS_BATCH", 200)  # a few lines a batch
    assert deprecated_api_requests(text) == whole and whole[0]["requests"] == 300


def test_a_broken_exposition_is_a_cluster_failure():
    with pytest.raises(ClusterError, match="could not be parsed"):
        deprecated_api_requests('apiserver_request_total{code="200" 5\n')


def _pins(name):
    pins = {}
    for line in (ROOT / name).read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if match:
            pins[match[1].lower().replace("_", "-")] = match[2]
    return pins


def test_the_agents_requirements_are_pinned_apart_from_the_services_and_installed_by_the_tests():
    agent, service = _pins("requirements-agent.txt"), _pins("requirements.txt")
    assert "kubernetes" in agent and "kubernetes" not in service
    # what both need is pinned alike
    assert {name: pin for name, pin in agent.items() if name in service} == \
        {name: service[name] for name in agent if name in service}
    assert "prometheus-client" in agent
    dev = _pins("requirements-dev.txt")  # which includes this file: one pin for each
    assert {name: pin for name, pin in agent.items() if name in dev} == \
        {name: dev[name] for name in agent if name in dev}
    assert "-r requirements-agent.txt" in (ROOT / "requirements-dev.txt").read_text().splitlines()
    for line in (ROOT / "requirements-agent.txt").read_text().splitlines():
        assert not line.strip() or line.startswith("#") or "==" in line, line
