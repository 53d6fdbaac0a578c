"""What the agent reads of a cluster (inventory/agent/cluster.py), with the
client's ApiClient stood in for by an API server of the test's making (no
socket): `/version`'s gitVersion; the nodes in pages (`limit`,
`continue`), a list whose token expired read again once, a server paging
in circles stopped; kube-proxy from its DaemonSet, else its static pods;
`/metrics` fed line by line; every field checked for its type, a failure a
ClusterError naming the path and the field; a refusal with the server's
reason, credentials filtered; an answer longer than its bound, or no JSON
object, refused; a client failure one ClusterError; a kubeconfig that
cannot be read a ConfigurationError. The agent run whole against a
loopback API server: tests/unit/agent/test_cli.py."""
import json

import pytest
import urllib3

from inventory.agent import bounds
from inventory.agent.cluster import DAEMONSET_PATH, NODES_PATH, PODS_PATH, Cluster
from inventory.agent.failures import ClusterError, ConfigurationError
from tests.support.kube_api import kubeconfig

TOKEN = "kube-token-abcdef123456"


class Response:
    """An answer's body as urllib3 streams it."""

    def __init__(self, body, headers):
        self.body, self.headers, self.offset = body, headers, 0

    def read1(self, limit):
        chunk = self.body[self.offset:self.offset + limit]
        self.offset += len(chunk)
        return chunk

    def close(self):
        pass


class Answer:
    def __init__(self, status, body=b"", reason="", headers=None):
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.status, self.reason = status, reason
        self.response = Response(body, headers or {})


class ApiServer:
    """The client's ApiClient: records each GET's path and query, and
    answers from `answers[path]` in turn (an Answer, or an exception raised)."""

    def __init__(self, **answers):
        self.answers = answers
        self.gets = []

    def param_serialize(self, method, resource_path, query_params, header_params,
                        auth_settings):
        return method, resource_path, query_params, header_params

    def call_api(self, method, path, query, headers, _request_timeout):
        self.gets.append((path, dict(query)))
        answer = self.answers[path].pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def close(self):
        pass


@pytest.fixture
def cluster(tmp_path):
    cluster = Cluster(str(kubeconfig(tmp_path / "config", "https://cluster.example.com",
                                     token=TOKEN)))
    yield cluster
    cluster.close()


def _serve(cluster, **answers):
    cluster.api = ApiServer(**{path: list(given) for path, given in answers.items()})
    return cluster.api


def _node(kubelet="v1.31.2", runtime="containerd://1.7", image="Ubuntu"):
    return {"metadata": {"name": "n", "labels": {"big": "x" * 100}},
            "status": {"nodeInfo": {"kubeletVersion": kubelet, "containerRuntimeVersion": runtime,
                                    "osImage": image}}}


def _page(*nodes, token=None):
    return {"items": list(nodes), "metadata": {"continue": token} if token else {}}


def test_the_api_servers_version(cluster):
    _serve(cluster, **{"/version/": [Answer(200, {"gitVersion": "v1.31.2-eks-1", "major": "1"})]})
    assert cluster.git_version() == "v1.31.2-eks-1"


@pytest.mark.parametrize("answer, words", [
    ({"major": "1"}, "has no gitVersion"),
    ({"gitVersion": 131}, "GET /version/: gitVersion is a number, not a string"),
    ({"gitVersion": "v1.31\x1b[2J"}, "gitVersion is not a Kubernetes version"),
    ([1, 2], "the answer is an array, not a JSON object"),
    (b'{"gitVersion": NaN}', "the answer is not JSON"),
    (b"<html>", "the answer is not JSON"),
])
def test_a_version_that_is_none_is_a_cluster_error_saying_where(cluster, answer, words):
    _serve(cluster, **{"/version/": [Answer(200, answer)]})
    with pytest.raises(ClusterError, match=words.replace("[", r"\[")):
        cluster.git_version()


def test_nodes_are_read_in_pages_and_tallied(cluster):
    api = _serve(cluster, **{NODES_PATH: [
        Answer(200, _page(_node(), _node("v1.30.1"), token="t1")),
        Answer(200, _page(_node()))]})
    tally = cluster.nodes(page_size=2)
    assert tally.count == 3
    assert tally.values["kubelet_versions"] == {"v1.31.2": 2, "v1.30.1": 1}
    assert [query for _, query in api.gets] == [{"limit": 2}, {"limit": 2, "continue": "t1"}]


def test_a_list_whose_continue_token_expired_is_read_again_once(cluster):
    expired = Answer(410, {"kind": "Status", "message": "too old resource version"},
                     reason="Gone")
    _serve(cluster, **{NODES_PATH: [
        Answer(200, _page(_node(), token="t1")), expired,
        Answer(200, _page(_node(), token="t2")), Answer(200, _page(_node()))]})
    assert cluster.nodes().count == 2  # each node once
    _serve(cluster, **{NODES_PATH: [Answer(200, _page(_node(), token="t1")), expired,
                                    Answer(200, _page(_node(), token="t2")), expired]})
    with pytest.raises(ClusterError) as failed:
        cluster.nodes()
    assert failed.value.status == 410


def test_a_server_paging_in_circles_is_stopped(cluster):
    _serve(cluster, **{NODES_PATH: [Answer(200, _page(_node(), token=token))
                                    for token in ("t1", "t2", "t1")]})
    with pytest.raises(ClusterError, match="the same continue token twice to list nodes"):
        cluster.nodes()


@pytest.mark.parametrize("page, words", [
    (_page(_node(), "n2"), "items[1] is a string, not an object"),
    (_page(_node(kubelet=131)), "items[0].status.nodeInfo.kubeletVersion is a number, "
                                "not a string"),
    (_page({"status": {"nodeInfo": []}}), "items[0].status.nodeInfo is an array, not an object"),
    ({"items": {}}, "items is an object, not an array"),
])
def test_a_field_of_the_wrong_type_is_named_with_its_path(cluster, page, words):
    _serve(cluster, **{NODES_PATH: [Answer(200, page)]})
    with pytest.raises(ClusterError) as failed:
        cluster.nodes()
    assert str(failed.value) == f"GET {NODES_PATH}: {words}"


def test_a_refusal_says_the_servers_reason_without_the_credentials(cluster):
    _serve(cluster, **{NODES_PATH: [Answer(403, {
        "kind": "Status", "message": f'nodes is forbidden: token {TOKEN} cannot list'},
        reason="Forbidden")]})
    with pytest.raises(ClusterError) as refused:
        cluster.nodes()
    assert refused.value.status == 403
    assert str(refused.value) == ("https://cluster.example.com refused to list nodes: 403 "
                                  "Forbidden: nodes is forbidden: token [redacted] cannot list")


def test_an_answer_longer_than_its_bound_is_refused(cluster):
    _serve(cluster, **{"/version/": [Answer(200, {"gitVersion": "v1.31.2"}, headers={
        "Content-Length": str(bounds.MAX_ANSWER_BYTES + 1)})]})
    with pytest.raises(ClusterError, match="more than the 16,777,216 the agent reads"):
        cluster.git_version()


def test_a_client_failure_is_one_cluster_error(cluster):
    _serve(cluster, **{"/version/": [urllib3.exceptions.MaxRetryError(
        None, "/version/", "Connection refused")]})
    with pytest.raises(ClusterError, match=r"^https://cluster.example.com could not be "
                                           r"reached to get /version: Connection refused$"):
        cluster.git_version()


def _daemonset(image="registry.k8s.io/kube-proxy:v1.31.2"):
    return {"spec": {"template": {"spec": {"containers": [{"name": "kube-proxy",
                                                           "image": image}]}}},
            "status": {"updatedNumberScheduled": 3, "desiredNumberScheduled": 3}}


def test_kube_proxy_from_its_daemonset_else_its_static_pods(cluster):
    _serve(cluster, **{DAEMONSET_PATH: [Answer(200, _daemonset())]})
    assert cluster.kube_proxy() == (True, {"v1.31.2": 3})
    pod = {"spec": {"containers": [{"name": "kube-proxy",
                                    "image": "gke.gcr.io/kube-proxy:v1.30.5-gke.1"}]},
           "status": {"phase": "Running"}}
    api = _serve(cluster, **{DAEMONSET_PATH: [Answer(404, reason="Not Found")],
                             PODS_PATH: [Answer(200, _page(pod, pod))]})
    assert cluster.kube_proxy() == (True, {"v1.30.5-gke.1": 2})
    assert api.gets[-1][1]["labelSelector"] == "component=kube-proxy"
    _serve(cluster, **{DAEMONSET_PATH: [Answer(404, reason="Not Found")],
                       PODS_PATH: [Answer(200, _page())]})
    assert cluster.kube_proxy() == (False, {})  # replaced (Cilium, Dataplane V2)


def test_a_daemonset_of_the_wrong_shape_is_named(cluster):
    broken = _daemonset()
    broken["status"]["desiredNumberScheduled"] = -1
    _serve(cluster, **{DAEMONSET_PATH: [Answer(200, broken)]})
    with pytest.raises(ClusterError, match="status.desiredNumberScheduled is not a count"):
        cluster.kube_proxy()


def test_metrics_are_fed_line_by_line_across_reads(cluster):
    body = b"# HELP x\n" + b"a" * 70_000 + b"\nlast"
    _serve(cluster, **{"/metrics": [Answer(200, b"# HELP x\n" + b"a" * 60_000 + b"\nlast")]})
    assert cluster.deprecated_api_requests(parse=list) == ["# HELP x", "a" * 60_000, "last"]
    _serve(cluster, **{"/metrics": [Answer(200, body)]})
    with pytest.raises(ClusterError, match="a line longer than"):
        cluster.deprecated_api_requests(parse=list)


def test_a_kubeconfig_that_cannot_be_read_is_a_configuration_error(tmp_path):
    with pytest.raises(ConfigurationError):
        Cluster(str(tmp_path / "missing"))
    with pytest.raises(ConfigurationError, match="^no cluster to scan: not in a cluster"):
        Cluster(None, environ={"HOME": str(tmp_path)})  # no ~/.kube/config there
