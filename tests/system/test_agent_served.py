"""The agent end to end: `python -m inventory.agent` reads a local API
server (tests/support/kube_api.py) and posts to the app served by gunicorn,
as a CronJob's run would; and the app honours the agent's Idempotency-Key."""
import json
import subprocess
import sys

import pytest

from inventory.agent import posting
from tests.support.kube_api import KubeApi, daemonset, kubeconfig, node
from tests.support.served import ROOT, Gunicorn

pytestmark = pytest.mark.slow
TOKEN = "agent-served-admin-token"


@pytest.fixture(scope="module")
def served():
    server = Gunicorn(TOKEN)
    org = server.request("POST", "/organizations", {"title": "Acme Corp"}).body["id"]
    assert server.request("POST", "/kubeplatforms", {
        "name": "eks-prod", "organization": org, "title": "EKS production",
        "control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}},
    ).status == 201
    assert server.request("POST", "/kubeclusters", {
        "name": "payments", "platform": "eks-prod", "environment": "production",
        "version": "1.31.4"}).status == 201
    yield server
    server.stop()


@pytest.fixture
def kube():
    api = KubeApi([node(f"n{i}") for i in range(5)] + [node("old", kubelet="v1.29.10")], daemonset())
    yield api
    api.close()


def _scans(served):
    return served.request("GET", "/kubeclusters/payments/scans").body["results"]


def test_the_agent_posts_a_scan_the_served_app_records_with_its_observations(served, kube, tmp_path):
    schema = served.request("GET", "/openapi.json").body["components"]["schemas"]
    if "nodes" not in schema["KubeClusterScanCreate"].get("properties", {}):
        pytest.skip("the served app's KubeClusterScanCreate has no `nodes` yet: scans with "
                    "observations (issue 35, item 1) are not in this app; unskipped when they are")
    env = {"KUBECONFIG": str(kubeconfig(tmp_path / "kubeconfig", kube.url)), "HOME": str(tmp_path),
           "INVENTORY_URL": f"http://127.0.0.1:{served.port}", "INVENTORY_TOKEN": TOKEN,
           "INVENTORY_CLUSTER": "payments"}
    before = len(_scans(served))
    dry = subprocess.run([sys.executable, "-m", "inventory.agent", "--dry-run"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert dry.returncode == 0, dry.stderr
    run = subprocess.run([sys.executable, "-m", "inventory.agent", "--page-size", "4"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    scans = _scans(served)
    assert len(scans) == before + 1
    [recorded] = [scan for scan in scans if scan["id"] in run.stdout]
    expected = json.loads(dry.stdout)
    for field in ("agent", "server", "nodes", "deprecated_api_requests"):
        assert recorded[field] == expected[field], field
    assert recorded["nodes"]["kubelet_versions"] == {"v1.29.10": 1, "v1.31.4-eks-2d5f260": 5}
    one = served.request("GET", f"/kubeclusters/payments/scans/{recorded['id']}")
    assert one.status == 200 and one.body["server"] == expected["server"]


def test_a_post_repeated_with_the_agents_key_is_recorded_once(served):
    """What the agent's retries rely on: the same key and body answer the
    first answer again, and record nothing more."""
    before = len(_scans(served))
    key = posting.new_key()
    url = f"http://127.0.0.1:{served.port}"
    first = posting.post_scan(url, "payments", TOKEN, {"scanned_on": 1764000000}, key, timeout=10)
    again = posting.post_scan(url, "payments", TOKEN, {"scanned_on": 1764000000}, key, timeout=10)
    assert first == again and first["id"].startswith("k8scs_")
    assert len(_scans(served)) == before + 1


def _kube_proxy_check(served):
    cluster = served.request("GET", "/kubeclusters/payments").body
    [check] = [c for c in cluster["readiness"]["checks"] if c["id"] == "kube-proxy-skew"]
    return check


@pytest.mark.parametrize("daemon_set, status, words", [
    (None, "passing", "No kube-proxy runs in the cluster"),  # Cilium, GKE Dataplane V2
    (daemonset("registry.k8s.io/kube-proxy:v1.27.16"), "error", "1.27"),
    (daemonset("registry.k8s.io/kube-proxy:v1.31.4"), "passing", "within the version-skew policy"),
])
def test_the_agents_scan_with_and_without_kube_proxy_reads_as_the_contract_says(
        served, tmp_path, daemon_set, status, words):
    """The agent against an API server with and without kube-proxy, its
    scan posted to the served app: kube-proxy-skew as the amendment says."""
    api = KubeApi([node(f"n{i}") for i in range(3)], daemon_set)
    try:
        env = {"KUBECONFIG": str(kubeconfig(tmp_path / "kubeconfig", api.url)),
               "HOME": str(tmp_path), "INVENTORY_URL": f"http://127.0.0.1:{served.port}",
               "INVENTORY_TOKEN": TOKEN, "INVENTORY_CLUSTER": "payments"}
        run = subprocess.run([sys.executable, "-m", "inventory.agent"], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=120)
    finally:
        api.close()
    assert (run.returncode, run.stderr) == (0, ""), run.stderr
    check = _kube_proxy_check(served)
    assert check["status"] == status and words in check["summary"], check
