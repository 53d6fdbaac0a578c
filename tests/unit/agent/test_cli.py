"""The agent run whole (`inventory.agent.cli.main`) against a local API
server (tests/support/kube_api.py) and a local inventory that records what
it is sent: what it reads and posts, its pages, its retries, and one line
and the exit code of its kind for each failure."""
import json
import re
import subprocess
import sys
import time

import pytest

from inventory.agent import VERSION, posting
from tests.support.agent_runs import (
    CLUSTER,
    CONFIGURATION,
    INVENTORY,
    SCAN_ID,
    FakeInventory,
    agent,
    failed,
)
from tests.support.kube_api import EXEC_PLUGIN, KubeApi, daemonset, kubeconfig, node
from tests.support.served import ROOT, free_port


def problem(status, detail, errors=()):
    return {"status": status, "title": "", "detail": detail, "type": "about:blank",
            "errors": [{"location": where, "message": message, "value": None}
                       for where, message in errors]}


NODES = ([node(f"ip-10-0-0-{i}", kubelet="v1.31.4-eks-2d5f260") for i in range(4)]
         + [node(f"ip-10-0-1-{i}", kubelet="v1.29.10-eks-94953ac", runtime="containerd://1.7.22")
            for i in range(2)]
         + [node("win-0", kubelet="v1.31.4-eks-2d5f260", runtime="containerd://1.7.27",
                 os_image="Windows Server 2022 Datacenter")])


@pytest.fixture
def kube():
    api = KubeApi(NODES, daemonset(updated=7, desired=7))
    yield api
    api.close()


def test_it_reads_the_cluster_and_posts_one_scan_with_a_token_and_an_idempotency_key(
        env, kube, inventory):
    before = int(time.time())
    code, out, err = agent(env)
    assert (code, err) == (0, "")
    assert out == (f"recorded scan {SCAN_ID} of payments: 7 nodes, server v1.31.4-eks-2d5f260, "
                   "4 deprecated APIs requested\n")
    [(path, headers, body)] = inventory.posts
    assert path == "/kubeclusters/payments/scans"
    assert headers["authorization"] == "Bearer inv_agent-writer-token-1234"
    assert headers["content-type"] == "application/json"
    assert re.fullmatch(r"inventory-agent-[0-9a-f-]{36}", headers["idempotency-key"])
    assert before <= body.pop("scanned_on") <= time.time()
    assert body == {
        "agent": {"name": "inventory-agent", "version": VERSION},
        "server": {"git_version": "v1.31.4-eks-2d5f260"},
        "nodes": {
            "count": 7,
            "kubelet_versions": {"v1.29.10-eks-94953ac": 2, "v1.31.4-eks-2d5f260": 5},
            # the DaemonSet's image tag, not nodeInfo.kubeProxyVersion (empty)
            "kube_proxy_versions": {"v1.31.3-minimal-eksbuild.2": 7},
            "container_runtimes": {"containerd://1.7.22": 2, "containerd://1.7.27": 5},
            "os_images": {"Amazon Linux 2023.6.20250203": 6, "Windows Server 2022 Datacenter": 1},
        },
        # joined with apiserver_request_total over every verb, code and scope
        "deprecated_api_requests": [
            {"group": "autoscaling", "version": "v2beta2", "resource": "horizontalpodautoscalers",
             "subresource": "", "removed_release": "1.26", "requests": 7},
            {"group": "extensions", "version": "v1beta1", "resource": "ingresses",
             "subresource": "", "removed_release": "", "requests": 0},
            {"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3", "resource": "flowschemas",
             "subresource": "", "removed_release": "1.32", "requests": 42},
            {"group": "flowcontrol.apiserver.k8s.io", "version": "v1beta3", "resource": "flowschemas",
             "subresource": "status", "removed_release": "1.32", "requests": 5},
        ],
    }
    assert "findings" not in body  # Pluto's and kube-no-trouble's to report, not the agent's
    assert sorted(set(kube.paths())) == sorted([
        "/version/", "/api/v1/nodes", "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy",
        "/metrics"])
    assert all(r.headers["authorization"] == "Bearer kube-token-for-tests" for r in kube.requests)
    assert all(r.headers["user-agent"] == f"inventory-agent/{VERSION}" for r in kube.requests)


def test_nodes_are_read_in_pages_with_a_limit_and_continue(env, kube, inventory):
    kube.nodes = [node(f"n{i}", kubelet="v1.30.1" if i % 3 else "v1.31.2") for i in range(1234)]
    code, _, err = agent(env, "--page-size", "500")
    assert (code, err) == (0, "")
    pages = [r.query for r in kube.requests if r.path == "/api/v1/nodes"]
    assert [q["limit"] for q in pages] == [["500"]] * 3
    assert [q.get("continue") for q in pages] == [None, ["500"], ["1000"]]
    nodes = inventory.posts[0][2]["nodes"]
    assert nodes["count"] == 1234
    assert nodes["kubelet_versions"] == {"v1.30.1": 822, "v1.31.2": 412}


def test_by_default_a_page_is_500_nodes_so_5000_nodes_are_ten_requests(env, kube, inventory):
    kube.nodes = [node(f"n{i}") for i in range(5000)]
    assert agent(env)[0] == 0
    pages = [r.query for r in kube.requests if r.path == "/api/v1/nodes"]
    assert len(pages) == 10 and all(q["limit"] == ["500"] for q in pages)
    assert inventory.posts[0][2]["nodes"]["count"] == 5000


def test_a_server_that_ignores_the_limit_is_read_in_one_page(env, kube, inventory):
    kube.nodes, kube.ignores_limit = [node(f"n{i}") for i in range(30)], True
    assert agent(env, "--page-size", "10")[0] == 0
    assert kube.paths().count("/api/v1/nodes") == 1
    assert inventory.posts[0][2]["nodes"]["count"] == 30


def test_an_expired_continue_token_reads_the_list_again_and_counts_each_node_once(env, kube, inventory):
    kube.nodes, kube.expire_continue_once = [node(f"n{i}") for i in range(25)], True
    assert agent(env, "--page-size", "10")[0] == 0
    pages = [r.query.get("continue") for r in kube.requests if r.path == "/api/v1/nodes"]
    assert pages == [None, ["10"], None, ["10"], ["20"]]  # the 410, then from the start
    assert inventory.posts[0][2]["nodes"]["count"] == 25


def test_metrics_larger_than_a_read_are_read_line_by_line_across_reads(env, kube, inventory):
    filler = "".join(f'apiserver_storage_objects{{resource="thing{i}.example.com"}} {i}\n'
                     for i in range(20000))  # about 1 MiB before the families read
    code, out, _ = agent(env, "--dry-run")
    small = json.loads(out)["deprecated_api_requests"]
    kube.metrics = filler + kube.metrics + filler
    code, out, err = agent(env, "--dry-run")
    assert (code, err) == (0, "")
    assert json.loads(out)["deprecated_api_requests"] == small and len(small) == 4


def test_without_a_kube_proxy_daemonset_or_static_pods_none_is_found(env, kube, inventory):
    kube.daemon_set = None  # kube-proxy replaced (Cilium, GKE Dataplane V2)
    assert agent(env)[0] == 0
    nodes = inventory.posts[0][2]["nodes"]
    assert nodes["kube_proxy_versions"] == {} and nodes["kube_proxy_found"] is False


def test_dry_run_prints_the_scan_as_json_and_posts_nothing(env, kube, inventory):
    for name in ("INVENTORY_URL", "INVENTORY_TOKEN", "INVENTORY_CLUSTER"):
        del env[name]  # not needed to post nothing
    code, out, err = agent(env, "--dry-run")
    assert (code, err) == (0, "")
    scan = json.loads(out)
    assert scan["server"] == {"git_version": "v1.31.4-eks-2d5f260"}
    assert scan["nodes"]["count"] == 7 and len(scan["deprecated_api_requests"]) == 4
    assert inventory.posts == []


def test_flags_override_the_environment(env, kube, inventory):
    other = FakeInventory()
    try:
        assert agent(env, "--inventory-url", other.url + "/", "--cluster", "ledger/eu")[0] == 0
        assert inventory.posts == []
        assert [path for path, _, _ in other.posts] == ["/kubeclusters/ledger%2Feu/scans"]
    finally:
        other.close()


# The kubeconfig's exec credential plugin: as EKS's, GKE's and AKS's are.

def test_a_kubeconfig_whose_user_is_an_exec_plugin_gets_its_token_from_the_plugin(
        env, kube, inventory, tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text(EXEC_PLUGIN)
    kube.token = "token-from-the-exec-plugin"
    kubeconfig(tmp_path / "kubeconfig", kube.url, token=kube.token, exec_script=plugin)
    code, _, err = agent(env)
    assert (code, err) == (0, "")
    assert {r.headers["authorization"] for r in kube.requests} == {
        "Bearer token-from-the-exec-plugin"}
    assert len(inventory.posts) == 1


def test_an_exec_plugin_that_fails_is_a_configuration_failure_saying_why(env, kube, inventory, tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text(EXEC_PLUGIN)
    kubeconfig(tmp_path / "kubeconfig", kube.url, exec_script=plugin, exec_fails="the SSO session expired")
    failed(agent(env), CONFIGURATION, "credentials", "the SSO session expired")
    assert kube.requests == [] and inventory.posts == []


# Configuration failures: exit 2, before the cluster is read.

@pytest.mark.parametrize("change, words", [
    ({"INVENTORY_URL": None}, ["INVENTORY_URL not set"]),
    ({"INVENTORY_TOKEN": None, "INVENTORY_CLUSTER": ""}, ["INVENTORY_TOKEN, INVENTORY_CLUSTER not set"]),
    ({"INVENTORY_URL": "inventory.example.com"}, ["INVENTORY_URL must be", "inventory.example.com"]),
    ({"INVENTORY_URL": "ftp://inventory.example.com"}, ["INVENTORY_URL must be"]),
    ({"INVENTORY_TOKEN": "two words"}, ["INVENTORY_TOKEN must be"]),
    ({"KUBECONFIG": None}, ["no cluster to scan", ".kube/config"]),
    ({"KUBECONFIG": "/nonexistent/kubeconfig"}, ["kubeconfig /nonexistent/kubeconfig"]),
])
def test_bad_configuration_is_exit_2_before_the_cluster_is_read(env, kube, inventory, change, words):
    for name, value in change.items():
        if value is None:
            env.pop(name)
        else:
            env[name] = value
    failed(agent(env), CONFIGURATION, *words)
    assert kube.requests == [] and inventory.posts == []


@pytest.mark.parametrize("argv, words", [
    (["--bogus"], ["unrecognized arguments: --bogus"]),
    (["--page-size", "0"], ["--page-size must be 1 to 5000"]),
    (["--page-size", "many"], ["--page-size", "invalid int value"]),
    (["--timeout", "0"], ["--timeout must be"]),
    (["--context", "nowhere"], ["nowhere"]),
])
def test_bad_flags_are_exit_2_in_one_line(env, kube, argv, words):
    failed(agent(env, *argv), CONFIGURATION, *words)
    assert kube.requests == []


def test_a_kubeconfig_that_is_not_yaml_is_exit_2(env, tmp_path):
    (tmp_path / "kubeconfig").write_text("clusters: [\n  - {name: x\n")
    failed(agent(env), CONFIGURATION, "kubeconfig")


def test_in_a_cluster_without_the_service_account_token_is_exit_2(env):
    del env["KUBECONFIG"]
    env.update(KUBERNETES_SERVICE_HOST="10.0.0.1", KUBERNETES_SERVICE_PORT="443")
    failed(agent(env), CONFIGURATION, "in-cluster configuration", "token")


# The cluster unreachable or refusing: exit 3, nothing posted.

def test_a_cluster_that_refuses_the_credentials_is_exit_3(env, kube, inventory):
    kube.token = "another"
    failed(agent(env), CLUSTER, "refused to get /version", "401")
    assert inventory.posts == []


def test_a_cluster_that_forbids_metrics_is_exit_3_with_its_reason(env, kube, inventory):
    kube.refuse["/metrics"] = 403
    failed(agent(env), CLUSTER, "refused to get /metrics", "403", "cannot get it")
    assert inventory.posts == []


def test_a_cluster_that_forbids_listing_nodes_is_exit_3(env, kube, inventory):
    kube.refuse["/api/v1/nodes"] = 403
    failed(agent(env), CLUSTER, "refused to list nodes", "403")
    assert inventory.posts == []


def test_a_cluster_that_forbids_the_kube_proxy_daemonset_is_exit_3(env, kube, inventory):
    kube.refuse["/apis/apps/v1/namespaces/kube-system/daemonsets"] = 403
    failed(agent(env), CLUSTER, "refused to get the kube-system/kube-proxy DaemonSet", "403")
    assert inventory.posts == []


def test_a_cluster_that_does_not_answer_in_time_is_exit_3(env, kube, inventory):
    kube.delay = 3
    started = time.monotonic()
    failed(agent(env, "--timeout", "0.5"), CLUSTER, "could not be reached to get /version",
           "timed out")
    assert time.monotonic() - started < 2.5  # a read that timed out is not tried again
    assert inventory.posts == []


def test_a_cluster_that_is_not_there_is_exit_3(env, tmp_path, inventory):
    kubeconfig(tmp_path / "kubeconfig", f"http://127.0.0.1:{free_port()}")
    failed(agent(env, "--timeout", "2"), CLUSTER, "could not be reached", "refused")
    assert inventory.posts == []


def test_metrics_that_are_not_the_exposition_format_are_exit_3(env, kube, inventory):
    kube.metrics = 'apiserver_request_total{code="200" 12\n'
    failed(agent(env), CLUSTER, "/metrics could not be parsed")
    assert inventory.posts == []


# The inventory unreachable or refusing: exit 4; retried with the same key
# where a retry may succeed.

def test_a_refused_token_is_exit_4_and_not_retried(env, inventory, pauses):
    inventory.answers = [(401, {}, problem(401, "Missing or invalid bearer token."))]
    failed(agent(env), INVENTORY, "refused the scan: 401", "Missing or invalid bearer token",
           "INVENTORY_TOKEN")
    assert len(inventory.posts) == 1 and pauses == []


def test_a_refused_body_is_exit_4_with_the_locations(env, inventory, pauses):
    inventory.answers = [(422, {}, problem(422, "The body is not valid.", [
        ("body.nodes", "Unknown field."), ("body.server", "Unknown field.")]))]
    failed(agent(env), INVENTORY, "422", "The body is not valid.", "body.nodes: Unknown field.")
    assert len(inventory.posts) == 1


def test_a_redirect_is_not_followed_and_names_where_it_leads(env, inventory):
    inventory.answers = [(308, {"Location": "https://inventory.example.com/kubeclusters/payments/scans"},
                          {})]
    failed(agent(env), INVENTORY, "308", "redirects to https://inventory.example.com/")
    assert len(inventory.posts) == 1


def test_an_unknown_cluster_is_exit_4(env, inventory):
    inventory.answers = [(404, {}, problem(404, "No kubecluster 'payments'."))]
    failed(agent(env), INVENTORY, "404", "No kubecluster 'payments'.")


def test_5xx_429_and_409_are_retried_with_the_same_key_and_body_after_retry_after(
        env, inventory, pauses):
    inventory.answers = [(503, {"Retry-After": "2"}, problem(503, "Busy.")),
                         (429, {"Retry-After": "3600"}, problem(429, "Too many requests.")),
                         (409, {}, problem(409, "A request with this Idempotency-Key is still running."))]
    code, out, err = agent(env)
    assert (code, err) == (0, "")
    assert len(inventory.posts) == 4
    assert len({headers["idempotency-key"] for _, headers, _ in inventory.posts}) == 1
    assert len({json.dumps(body) for _, _, body in inventory.posts}) == 1
    assert pauses == [2.0, posting.MAX_WAIT, 4.0]  # Retry-After (capped), else the backoff


def test_an_inventory_that_keeps_failing_is_exit_4_after_four_tries(env, inventory, pauses):
    inventory.answers = [(500, {}, problem(500, "Internal error."))] * 5
    failed(agent(env), INVENTORY, "500", "after 4 tries")
    assert len(inventory.posts) == 4 and pauses == [1.0, 2.0, 4.0]


def test_an_inventory_that_is_not_there_is_exit_4_after_four_tries(env, pauses):
    env["INVENTORY_URL"] = f"http://127.0.0.1:{free_port()}"
    failed(agent(env), INVENTORY, "could not be reached (4 tries)")
    assert pauses == [1.0, 2.0, 4.0]


def test_an_answer_that_does_not_come_in_time_is_asked_again_with_the_same_key(env, inventory, pauses):
    inventory.delay = 1.5
    failed(agent(env, "--timeout", "0.5"), INVENTORY, "could not be reached", "timed out")
    assert len(inventory.posts) == 4
    assert len({headers["idempotency-key"] for _, headers, _ in inventory.posts}) == 1


@pytest.mark.slow
def test_as_a_command_a_failure_is_one_line_on_stderr_and_its_exit_code(env, kube):
    """`python -m inventory.agent` in its own process: nothing else is
    printed (the client's and urllib3's log lines included)."""
    kube.refuse["/metrics"] = 403
    run = subprocess.run([sys.executable, "-m", "inventory.agent"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == CLUSTER
    assert run.stdout == "" and run.stderr.count("\n") == 1
    assert run.stderr.startswith("inventory-agent: cluster: ")
    kube.refuse.clear()
    dry = subprocess.run([sys.executable, "-m", "inventory.agent", "--dry-run"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert (dry.returncode, dry.stderr) == (0, "")
    assert json.loads(dry.stdout)["nodes"]["count"] == 7
