"""The scanning agent against a real kube-apiserver (tests/support/
kube_apiserver.py), with the ServiceAccount and roles of docs/agent.md
(applied from the page itself, so they are proven to be enough): nodes made
through the API, the kube-proxy DaemonSet, a deprecated API requested for
real so that the server's own /metrics reports it, and the scan posted to a
served inventory. The first test runs before any of that: a cluster without
kube-proxy (GKE Dataplane V2, Cilium's replacement), then the same cluster
once a deprecated API was requested of it."""
import json
import subprocess
import sys

import pytest
import yaml

from tests.support.served import ROOT, Gunicorn

pytestmark = pytest.mark.slow
INVENTORY_PORT = 9811
ADMIN = "agent-kube-admin-token"
MERGE = "application/merge-patch+json"
# Served by 1.31, removed in 1.32: the API server counts its requests in
# apiserver_requested_deprecated_apis.
DEPRECATED = "/apis/flowcontrol.apiserver.k8s.io/v1beta3/flowschemas"


def _doc_manifests():
    text = (ROOT / "docs" / "agent.md").read_text()
    [block] = [b.split("```", 1)[0] for b in text.split("```yaml\n")[1:]
               if "kind: ClusterRole\n" in b]
    return [doc for doc in yaml.safe_load_all(block)
            if doc["kind"] in ("Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
                               "Role", "RoleBinding")]


def _post_scan(served, kubeconfig, home, writer):
    run = _agent(kubeconfig, home, env={
        "INVENTORY_URL": f"http://127.0.0.1:{INVENTORY_PORT}", "INVENTORY_TOKEN": writer,
        "INVENTORY_CLUSTER": "bare"})
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    record = served.request("GET", "/kubeclusters/bare").body
    return record, {check["id"]: check for check in record["readiness"]["checks"]}


def _agents_token(served, title, cluster):
    """An organization `title` with a kubeadm platform and its cluster
    `cluster` (1.31.4, the real server's) in the served inventory: a
    writer token of that organization, as the agent's CronJob holds."""
    org = served.request("POST", "/organizations", {"title": title}).body["id"]
    assert served.request("POST", "/kubeplatforms", {
        "name": "kubeadm", "organization": org, "title": "kubeadm",
        "control_plane": {"provider": "kubeadm"},
        "infrastructure": {"cloud": {"provider": "on-prem"}}}).status == 201
    assert served.request("POST", "/kubeclusters", {
        "name": cluster, "platform": "kubeadm", "environment": "test",
        "version": "1.31.4"}).status == 201
    return served.request("POST", "/tokens", {"name": "agent", "role": "writer",
                                              "organization": org}).body["token"]

def test_a_cluster_without_kube_proxy_passes_until_a_deprecated_api_is_asked_of_it(
        kube_apiserver, tmp_path_factory):
    """Nodes through the API, every kubelet on the server's version, no
    kube-proxy anywhere and nothing deprecated asked yet: the agent says it
    found none (not "not reported"), and the cluster reaches passing. Then a
    client asks for an API that 1.32 removes, for real: the next scan makes
    the cluster's deprecated-apis check, and the cluster, an error."""
    kube = kube_apiserver
    status, body = kube.request("GET", "/metrics")
    assert status == 200 and "apiserver_requested_deprecated_apis{" not in body, (
        "this test needs a server no deprecated API was asked of: it runs first")
    for manifest in _doc_manifests():
        kube.apply(manifest)
    for name in ("node-a", "node-b", "node-c"):
        kube.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        status, body = kube.request("PATCH", f"/api/v1/nodes/{name}/status", {"status": {
            "nodeInfo": {"kubeletVersion": "v1.31.4", "containerRuntimeVersion": "containerd://1.7.22",
                         "osImage": "Ubuntu 24.04.1 LTS", "kubeProxyVersion": "",
                         "machineID": name, "systemUUID": name, "bootID": name,
                         "kernelVersion": "6.8.0", "operatingSystem": "linux",
                         "architecture": "amd64"}}}, content_type=MERGE)
        assert status == 200, body
    home = tmp_path_factory.mktemp("bare")
    kubeconfig = kube.kubeconfig(home / "kubeconfig",
                                 kube.service_account_token("inventory-agent", "inventory-agent"))
    scan = json.loads(_agent(kubeconfig, home, "--dry-run").stdout)
    assert scan["nodes"]["kube_proxy_found"] is False
    assert not scan["nodes"].get("kube_proxy_versions")
    assert scan["deprecated_api_requests"] == []

    served = Gunicorn(ADMIN, port=INVENTORY_PORT)
    try:
        writer = _agents_token(served, "Dataplane V2", "bare")
        record, checks = _post_scan(served, kubeconfig, home, writer)
        assert checks["kube-proxy-skew"]["status"] == "passing", checks["kube-proxy-skew"]
        assert "No kube-proxy runs" in checks["kube-proxy-skew"]["summary"]
        assert record["readiness"]["status"] == "passing", checks

        status, body = kube.request("GET", DEPRECATED)
        assert status == 200, body
        record, checks = _post_scan(served, kubeconfig, home, writer)
        assert checks["deprecated-apis"]["status"] == "error", checks["deprecated-apis"]
        assert "flowschemas" in json.dumps(checks["deprecated-apis"])
        assert checks["kube-proxy-skew"]["status"] == "passing"
        assert record["readiness"]["status"] == "error"
    finally:
        served.stop()


@pytest.fixture(scope="module")
def cluster(kube_apiserver, tmp_path_factory):
    """The real server made to look like a cluster of three nodes (two on
    1.31.4, one on 1.30.8) with kube-proxy v1.31.4, which was asked for a
    deprecated API; and a kubeconfig with the agent's ServiceAccount token."""
    kube = kube_apiserver
    for manifest in _doc_manifests():
        kube.apply(manifest)
    kubelets = {"node-a": "v1.31.4", "node-b": "v1.31.4", "node-c": "v1.30.8"}
    for name, kubelet in kubelets.items():
        kube.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
        status, body = kube.request("PATCH", f"/api/v1/nodes/{name}/status", {"status": {
            "nodeInfo": {"kubeletVersion": kubelet, "containerRuntimeVersion": "containerd://1.7.22",
                         "osImage": "Ubuntu 24.04.1 LTS", "kubeProxyVersion": "",
                         "machineID": name, "systemUUID": name, "bootID": name,
                         "kernelVersion": "6.8.0", "operatingSystem": "linux",
                         "architecture": "amd64"}}}, content_type=MERGE)
        assert status == 200, body
    kube.apply({"apiVersion": "apps/v1", "kind": "DaemonSet",
                "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
                "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
                         "template": {"metadata": {"labels": {"k8s-app": "kube-proxy"}},
                                      "spec": {"containers": [{
                                          "name": "kube-proxy",
                                          "image": "registry.k8s.io/kube-proxy:v1.31.4"}]}}}})
    status, body = kube.request(
        "PATCH", "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy/status",
        {"status": {"currentNumberScheduled": 3, "desiredNumberScheduled": 3,
                    "numberMisscheduled": 0, "numberReady": 3, "updatedNumberScheduled": 3}},
        content_type=MERGE)
    assert status == 200, body
    status, body = kube.request("GET", DEPRECATED)
    assert status == 200, body
    token = kube.service_account_token("inventory-agent", "inventory-agent")
    directory = tmp_path_factory.mktemp("agent")
    return kube.kubeconfig(directory / "kubeconfig", token), directory


def _agent(kubeconfig, home, *args, env=None):
    return subprocess.run([sys.executable, "-m", "inventory.agent", *args], cwd=ROOT, env={
        "PATH": "/usr/bin:/bin", "HOME": str(home), "KUBECONFIG": str(kubeconfig), **(env or {})},
        capture_output=True, text=True, timeout=120)


def test_the_agent_reads_the_real_server_with_the_roles_of_its_page(cluster):
    kubeconfig, home = cluster
    run = _agent(kubeconfig, home, "--dry-run", "--page-size", "2")
    assert run.returncode == 0, run.stderr
    scan = json.loads(run.stdout)
    assert scan["server"] == {"git_version": "v1.31.4"}  # scripts/kube-apiserver's stamp
    assert scan["nodes"]["count"] == 3
    assert scan["nodes"]["kubelet_versions"] == {"v1.31.4": 2, "v1.30.8": 1}
    assert scan["nodes"]["kube_proxy_versions"] == {"v1.31.4": 3}
    [flowschemas] = [api for api in scan["deprecated_api_requests"]
                     if api["resource"] == "flowschemas"]
    assert flowschemas["group"] == "flowcontrol.apiserver.k8s.io"
    assert flowschemas["version"] == "v1beta3"
    assert flowschemas["removed_release"] == "1.32"
    assert flowschemas["requests"] >= 1


def test_the_agents_scan_of_the_real_server_is_recorded_by_the_served_inventory(cluster):
    kubeconfig, home = cluster
    served = Gunicorn(ADMIN, port=INVENTORY_PORT)
    try:
        writer = _agents_token(served, "Acme", "real")
        run = _agent(kubeconfig, home, env={
            "INVENTORY_URL": f"http://127.0.0.1:{INVENTORY_PORT}", "INVENTORY_TOKEN": writer,
            "INVENTORY_CLUSTER": "real"})
        assert (run.returncode, run.stderr) == (0, ""), run.stderr
        [scan] = served.request("GET", "/kubeclusters/real/scans").body["results"]
        assert scan["server"] == {"git_version": "v1.31.4"}
        assert scan["nodes"]["kubelet_versions"] == {"v1.31.4": 2, "v1.30.8": 1}
        cluster_record = served.request("GET", "/kubeclusters/real").body
        assert cluster_record["observed"]["version"] == "v1.31.4"
        checks = {check["id"]: check for check in cluster_record["readiness"]["checks"]}
        # flowschemas v1beta3 was requested and is gone in 1.32, the target
        assert checks["deprecated-apis"]["status"] == "error", checks["deprecated-apis"]
        assert "flowschemas" in json.dumps(checks["deprecated-apis"])
    finally:
        served.stop()
