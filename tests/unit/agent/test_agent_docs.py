"""docs/agent.md holds together with the agent: its manifests parse, the
ServiceAccount the CronJob runs as is bound to roles whose rules grant each
request the agent makes and nothing it does not, the token comes from the
Secret, and the example scan has the keys a real one has."""
import io
import json
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
import yaml

from inventory.agent.cli import main
from tests.support.kube_api import KubeApi, daemonset, kubeconfig, node, static_pod

ROOT = pathlib.Path(__file__).resolve().parents[3]
PAGE = (ROOT / "docs" / "agent.md").read_text()


def _blocks(language):
    return re.findall(rf"^```{language}\n(.*?)^```", PAGE, flags=re.M | re.S)


def _manifests():
    [block] = _blocks("yaml")
    return list(yaml.safe_load_all(block))


def _one(kind):
    [found] = [m for m in _manifests() if m["kind"] == kind]
    return found


@pytest.fixture(scope="module")
def agent_run(tmp_path_factory):
    """Dry runs against a local API server, one with a kube-proxy DaemonSet
    and one with kube-proxy's static pods instead: the requests they made,
    and the first's scan."""
    requests, scans = [], []
    for daemon_set, pods in ((daemonset(), []), (None, [static_pod("n0")])):
        api = KubeApi([node(f"n{i}") for i in range(3)], daemon_set)
        api.static_pods = pods
        try:
            config = kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", api.url)
            out, err = io.StringIO(), io.StringIO()
            assert main(["--dry-run", "--page-size", "2"], {"KUBECONFIG": str(config)}, out,
                        err) == 0, err.getvalue()
            requests += api.requests
            scans.append(json.loads(out.getvalue()))
        finally:
            api.close()
    return requests, scans[0]


def _needed(request):
    """What RBAC checks for one request: ("url", path, verb) or
    ("resource", group, resource, namespace, name, verb)."""
    match = re.fullmatch(r"/api/v1/nodes", request.path)
    if match:
        return ("resource", "", "nodes", None, None, "list")
    match = re.fullmatch(r"/api/v1/namespaces/(?P<ns>[^/]+)/(?P<res>[^/]+)", request.path)
    if match:
        return ("resource", "", match["res"], match["ns"], None, "list")
    match = re.fullmatch(r"/apis/(?P<group>[^/]+)/[^/]+/namespaces/(?P<ns>[^/]+)/(?P<res>[^/]+)/"
                         r"(?P<name>[^/]+)", request.path)
    if match:
        return ("resource", match["group"], match["res"], match["ns"], match["name"], "get")
    return ("url", request.path, "get")


def _grants(rule, needed, namespace):
    """Whether one RBAC rule of a role (`namespace`: None for a ClusterRole)
    grants `needed`."""
    if needed[0] == "url":
        return needed[1] in rule.get("nonResourceURLs", []) and needed[2] in rule["verbs"]
    _, group, resource, ns, name, verb = needed
    return (group in rule.get("apiGroups", []) and resource in rule.get("resources", [])
            and verb in rule["verbs"] and (namespace is None or namespace == ns)
            and ("resourceNames" not in rule or name in rule["resourceNames"]))


def _bound_roles():
    """The roles bound to the CronJob's ServiceAccount: (namespace or None, rules)."""
    job = _one("CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    account = _one("ServiceAccount")["metadata"]
    assert job["serviceAccountName"] == account["name"]
    subject = {"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}
    roles = []
    for binding in _manifests():
        if binding["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        assert binding["subjects"] == [subject]
        ref = binding["roleRef"]
        namespace = binding["metadata"].get("namespace")
        [role] = [m for m in _manifests() if m["kind"] == ref["kind"]
                  and m["metadata"]["name"] == ref["name"]
                  and m["metadata"].get("namespace") == (namespace if ref["kind"] == "Role" else None)]
        roles.append((namespace if binding["kind"] == "RoleBinding" else None, role["rules"]))
    return roles


def test_the_manifests_parse_and_hold_each_kind_the_page_names():
    kinds = sorted(m["kind"] for m in _manifests())
    assert kinds == sorted(["Namespace", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role",
                            "RoleBinding", "Secret", "CronJob"])


@pytest.mark.slow
def test_the_bound_roles_grant_every_request_the_agent_makes(agent_run):
    requests, _ = agent_run
    roles = _bound_roles()
    needed = {_needed(request) for request in requests}
    assert {n[1] for n in needed if n[0] == "url"} >= {"/metrics"}
    for each in needed:
        assert any(_grants(rule, each, namespace) for namespace, rules in roles for rule in rules), each


def test_each_thing_the_roles_grant_is_used_by_the_agent(agent_run):
    requests, _ = agent_run
    needed = {_needed(request) for request in requests}
    for namespace, rules in _bound_roles():
        for rule in rules:
            for verb in rule["verbs"]:
                for url in rule.get("nonResourceURLs", []):
                    # /version without the slash: what kubectl asks; the client asks /version/
                    assert ("url", url, verb) in needed or url + "/" in {n[1] for n in needed}, url
                for group in rule.get("apiGroups", []):
                    for resource in rule.get("resources", []):
                        for name in rule.get("resourceNames", [None]):
                            assert any(n[0] == "resource" and n[1:3] == (group, resource)
                                       and n[5] == verb and (name is None or n[4] == name)
                                       and (namespace is None or n[3] == namespace)
                                       for n in needed), (group, resource, verb, name)


def test_the_token_comes_from_the_secret_and_the_rest_from_the_cronjobs_environment():
    secret = _one("Secret")
    [container] = _one("CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    env = {e["name"]: e for e in container["env"]}
    assert set(env) == {"INVENTORY_URL", "INVENTORY_CLUSTER", "INVENTORY_TOKEN"}
    ref = env["INVENTORY_TOKEN"]["valueFrom"]["secretKeyRef"]
    assert ref["name"] == secret["metadata"]["name"] and ref["key"] in secret["stringData"]
    assert secret["metadata"]["namespace"] == _one("CronJob")["metadata"]["namespace"]


def test_the_image_runs_the_agent_from_what_it_copies(tmp_path):
    """The page's Dockerfile, executed as far as this machine can: what it
    copies, copied alone into a folder, runs the agent (the requirements are
    this environment's: requirements-agent.txt's are a subset)."""
    [dockerfile] = _blocks("dockerfile")
    copies = re.findall(r"^COPY (\S+) (\S+)$", dockerfile, flags=re.M)
    assert ("requirements-agent.txt", ".") in copies
    for source, target in copies:
        if source.endswith("/"):
            shutil.copytree(ROOT / source, tmp_path / target)
        else:
            shutil.copy(ROOT / source, tmp_path / target)
    [entrypoint] = re.findall(r"^ENTRYPOINT (\[.*\])$", dockerfile, flags=re.M)
    command = json.loads(entrypoint)
    assert command[0] == "python"
    run = subprocess.run([sys.executable, "-E", "-s", *command[1:], "--help"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "--kubeconfig" in run.stdout


def test_the_example_scan_has_the_keys_a_real_scan_has(agent_run):
    _, scan = agent_run
    [example] = [json.loads(block) for block in _blocks("json")]
    assert set(example) == set(scan)
    assert set(example["nodes"]) == set(scan["nodes"])
    assert set(example["deprecated_api_requests"][0]) == set(scan["deprecated_api_requests"][0])


def test_the_agents_bounds_fit_the_cronjobs_limits():
    """The deadline of each try fits the Job's (with its retries), and the
    peak memory the caps keep to is under the container's limit."""
    from inventory.agent import bounds

    job = _one("CronJob")["spec"]["jobTemplate"]["spec"]
    tries = job["backoffLimit"] + 1
    assert bounds.DEFAULT_DEADLINE * tries < job["activeDeadlineSeconds"]
    [container] = job["template"]["spec"]["containers"]
    limit = container["resources"]["limits"]["memory"]
    assert limit.endswith("Mi") and bounds.MAX_RSS_MIB < int(limit[:-2])
