"""The agent against a hostile or broken API server (and inventory): each
shape of the issue's report answered with exit 3 (4 for the inventory) and
one line, within the documented bounds of memory and time (docs/agent.md,
"Bounds"), and never a server's text unfiltered nor a credential.

The shapes that cost memory or time are run as the command, in a process of
their own, whose peak RSS (its VmHWM, read as it exits: the rusage of a
child counts the parent's memory it was forked with) is held to
bounds.MAX_RSS_MIB; times are held to the documented deadline with a
lenient margin (the machine is shared), never tightly."""
import itertools
import json
import os
import pathlib
import subprocess
import sys
import threading
import time

import pytest

from inventory.agent import NAME, bounds
from tests.support.agent_runs import CLUSTER, INVENTORY, agent, failed
from tests.support.kube_api import TOKEN, KubeApi, daemonset, kubeconfig, node, static_pod
from tests.support.served import ROOT, free_port


@pytest.fixture
def kube():
    api = KubeApi([node(f"n{i}") for i in range(3)], daemonset())
    yield api
    api.close()


# `python -m inventory.agent`, which writes its peak RSS (VmHWM, KiB) to
# $PEAK_FILE as it exits
AS_THE_COMMAND = """
import atexit, os, runpy, sys
def peak():
    with open("/proc/self/status") as status:
        kib = next(line.split()[1] for line in status if line.startswith("VmHWM"))
    with open(os.environ["PEAK_FILE"], "w") as out:
        out.write(kib)
atexit.register(peak)
sys.argv[0] = "inventory.agent"
runpy.run_module("inventory.agent", run_name="__main__", alter_sys=True)
"""


class Run:
    """The agent run as its command: exit code, stdout, stderr, seconds, and its peak RSS in MiB."""

    def __init__(self, env, *argv, limit=120):
        peak_file = pathlib.Path(env["HOME"]) / "peak-rss"
        started = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", AS_THE_COMMAND, *argv], cwd=ROOT,
                                env={**env, "PEAK_FILE": str(peak_file)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        outputs = {}
        readers = [threading.Thread(target=lambda name, pipe: outputs.__setitem__(name, pipe.read()),
                                    args=(name, pipe)) for name, pipe in
                   (("out", proc.stdout), ("err", proc.stderr))]
        for reader in readers:
            reader.start()
        killer = threading.Timer(limit, proc.kill)
        killer.start()
        try:
            _, status = os.waitpid(proc.pid, 0)
        finally:
            killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        for reader in readers:
            reader.join()
        self.seconds = time.monotonic() - started
        self.code = proc.returncode
        self.out, self.err = outputs["out"].decode(), outputs["err"].decode()
        self.rss_mib = int(peak_file.read_text()) / 1024


def one_line_failure(run, code, *words):
    assert run.code == code, (run.code, run.err[-2000:])
    assert run.err.endswith("\n") and run.err.count("\n") == 1, run.err[-2000:]
    assert run.err.startswith(f"{NAME}: ")
    for word in words:
        assert word in run.err, (word, run.err)
    print(f"peak RSS {run.rss_mib:.0f} MiB in {run.seconds:.1f} s")  # with -s: the figures
    assert run.rss_mib < bounds.MAX_RSS_MIB, run.rss_mib


@pytest.mark.slow
def test_a_scan_of_5000_nodes_stays_within_the_same_bound(env, kube, inventory):
    """The bound is not only for refusals: a large, honest cluster's scan keeps to it."""
    kube.nodes = [node(f"ip-10-0-{i // 250}-{i % 250}") for i in range(5000)]
    run = Run(env)
    assert (run.code, run.err) == (0, "")
    print(f"peak RSS {run.rss_mib:.0f} MiB in {run.seconds:.1f} s")
    assert run.rss_mib < bounds.MAX_RSS_MIB
    assert inventory.posts[0][2]["nodes"]["count"] == 5000


# -- memory and time: the command, measured ---------------------------------

@pytest.mark.slow
def test_endless_continue_tokens_end_at_the_deadline_in_bounded_memory(env, kube):
    kube.endless_continue = True
    run = Run(env, "--dry-run", "--page-size", "2", "--deadline", "4")
    one_line_failure(run, CLUSTER, "deadline of 4 s passed")
    assert run.seconds < 4 + 30  # lenient: a loaded machine starts Python slowly
    assert len([r for r in kube.requests if r.path == "/api/v1/nodes"]) > 10  # it did page


@pytest.mark.slow
def test_a_metrics_flood_ends_at_the_answers_time_in_bounded_memory(env, kube):
    line = b"apiserver_storage_objects{resource=\"things.example.com\"} 1\n" * 1000
    kube.streams["/metrics"] = (200, "text/plain; version=0.0.4", itertools.repeat(line))
    run = Run(env, "--dry-run", "--timeout", "3")
    one_line_failure(run, CLUSTER, "/metrics")
    # whichever bound comes first on this machine: the answer's time, or its
    # bytes (a fast machine reads the 256 MiB the agent takes within 3 s)
    assert "timed out" in run.err or "longer than the 268,435,456 bytes" in run.err, run.err
    assert run.seconds < 3 + 30


@pytest.mark.slow
def test_a_metrics_flood_of_counted_apis_stops_at_their_bound_in_bounded_memory(env, kube):
    def flood():
        for i in itertools.count():
            yield b"".join(b'apiserver_request_total{group="g%d",resource="r",version="v1",verb="GET"} 1\n'
                           % (i * 1000 + j) for j in range(1000))
    kube.streams["/metrics"] = (200, "text/plain; version=0.0.4", flood())
    run = Run(env, "--dry-run", "--timeout", "60")
    one_line_failure(run, CLUSTER, "more than 50,000 APIs")


def _huge_page(count):
    """A NodeList of `count` nodes in one answer, made as it is sent (never held whole)."""
    yield b'{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":['
    one = json.dumps(node("n", kubelet="v1.31.4")).encode()
    for i in range(count):
        yield (b"," if i else b"") + one
    yield b"]}"


@pytest.mark.slow
def test_one_page_of_300k_nodes_is_refused_past_the_answer_cap_in_bounded_memory(env, kube):
    kube.streams["/api/v1/nodes"] = (200, "application/json", _huge_page(300_000))
    run = Run(env, "--dry-run")
    one_line_failure(run, CLUSTER, "list nodes", f"{bounds.MAX_ANSWER_BYTES:,} bytes")


@pytest.mark.slow
def test_the_costliest_json_within_the_caps_stays_within_the_memory_bound(env, kube):
    """Empty arrays, the most Python objects per byte (`[],`: 3 bytes, 56 of
    memory), as many as MAX_ANSWER_VALUES lets through."""
    count = bounds.MAX_ANSWER_VALUES - 10
    kube.streams["/api/v1/nodes"] = (200, "application/json", itertools.chain(
        [b'{"items": ['], itertools.repeat(b"[],", count), [b"[]]}"]))
    run = Run(env, "--dry-run")
    one_line_failure(run, CLUSTER, "GET /api/v1/nodes: items[0] is an array, not an object")


@pytest.mark.slow
def test_an_answer_that_drips_a_byte_at_a_time_ends_at_the_answers_time(env, kube):
    def drip():
        for byte in json.dumps(kube.version).encode() * 100:
            time.sleep(0.2)  # well within a socket's timeout: only the answer's time ends it
            yield bytes([byte])
    kube.streams["/version/"] = (200, "application/json", drip())
    run = Run(env, "--dry-run", "--timeout", "2")
    one_line_failure(run, CLUSTER, "could not be reached to get /version", "timed out",
                     "no whole answer within 2 s")
    assert run.seconds < 2 + 30


@pytest.mark.slow
def test_the_deadline_bounds_a_drip_across_many_answers(env, kube):
    """Each answer within its time, the run past its deadline: the deadline ends it."""
    kube.delay = 0.5
    kube.nodes = [node(f"n{i}") for i in range(100)]
    run = Run(env, "--dry-run", "--page-size", "1", "--timeout", "5", "--deadline", "3")
    one_line_failure(run, CLUSTER, "deadline of 3 s passed")
    assert run.seconds < 3 + 30


def test_the_deadline_comes_from_the_environment_and_a_flag_wins(env, kube):
    kube.delay = 0.3
    kube.nodes = [node(f"n{i}") for i in range(20)]
    env["INVENTORY_AGENT_DEADLINE"] = "1"
    started = time.monotonic()
    failed(agent(env, "--page-size", "1"), CLUSTER, "deadline of 1 s passed")
    assert time.monotonic() - started < 10
    assert agent(env, "--page-size", "1", "--deadline", "60")[0] == 0


@pytest.mark.parametrize("value", ["soon", "0", "-5", "99999"])
def test_a_bad_deadline_is_exit_2(env, kube, value):
    env["INVENTORY_AGENT_DEADLINE"] = value
    failed(agent(env), 2, "INVENTORY_AGENT_DEADLINE")
    assert kube.requests == []


# -- caps, in this process --------------------------------------------------

def test_continue_tokens_past_the_pages_bound_are_a_cluster_failure(env, kube, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_PAGES", 20)
    kube.endless_continue = True
    failed(agent(env, "--page-size", "2"), CLUSTER, "more than 20 pages", "list nodes")
    assert kube.paths().count("/api/v1/nodes") == 20


def test_nodes_past_the_nodes_bound_are_a_cluster_failure(env, kube, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_NODES", 5)
    kube.nodes = [node(f"n{i}") for i in range(6)]
    failed(agent(env), CLUSTER, "more than 5 nodes")


def test_an_announced_answer_past_the_cap_is_not_read(env, kube, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_ANSWER_BYTES", 10_000)
    kube.nodes = [node(f"n{i}") for i in range(50)]
    failed(agent(env), CLUSTER, "list nodes", "more than the 10,000")


def test_metrics_past_their_bytes_bound_are_a_cluster_failure(env, kube, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_METRICS_BYTES", 100_000)
    kube.metrics += "".join(f'apiserver_storage_objects{{resource="r{i}"}} {i}\n' for i in range(5000))
    failed(agent(env), CLUSTER, "/metrics is longer than the 100,000 bytes")


def test_a_metrics_line_past_its_bound_is_a_cluster_failure(env, kube):
    kube.metrics = "x" * (bounds.MAX_METRICS_LINE + 10) + "\n" + kube.metrics
    failed(agent(env), CLUSTER, "/metrics has a line longer than")


def test_json_that_expands_past_the_values_bound_is_a_cluster_failure(env, kube, monkeypatch):
    monkeypatch.setattr(bounds, "MAX_ANSWER_VALUES", 1000)
    kube.streams["/api/v1/nodes"] = (200, "application/json",
                                     [b'{"items": [' + b",".join([b"[]"] * 5000) + b"]}"])
    failed(agent(env), CLUSTER, "GET /api/v1/nodes", "more than 1,000 JSON values")


# -- wrong types and NaN: exit 3 naming the path, never "internal error" ----

def _count_is(kube, value):
    kube.metrics = kube.metrics.replace('version="v1beta3"} 40', f'version="v1beta3"}} {value}', 1)


def _node_with(**info):
    found = node("odd")
    found["status"]["nodeInfo"].update(info)
    return found


@pytest.mark.parametrize("change, words", [
    (lambda k: setattr(k, "nodes", [_node_with(kubeletVersion=5)]),
     ["GET /api/v1/nodes", "items[0].status.nodeInfo.kubeletVersion is a number, not a string"]),
    (lambda k: setattr(k, "nodes", [_node_with(osImage={"a": 1})]),
     ["items[0].status.nodeInfo.osImage is an object"]),
    (lambda k: setattr(k, "nodes", ["n0"]), ["GET /api/v1/nodes: items[0] is a string, not an object"]),
    (lambda k: k.nodes[0].__setitem__("status", {"nodeInfo": []}),
     ["items[0].status.nodeInfo is an array, not an object"]),
    (lambda k: k.version.__setitem__("gitVersion", {"v": 1}),
     ["GET /version/: gitVersion is an object, not a string"]),
    (lambda k: k.version.__setitem__("gitVersion", "v1\x1b[31m.31"), ["not a Kubernetes version"]),
    (lambda k: k.daemon_set["status"].__setitem__("updatedNumberScheduled", "3"),
     ["daemonsets/kube-proxy: status.updatedNumberScheduled is a string, not a whole number"]),
    (lambda k: k.daemon_set["status"].__setitem__("updatedNumberScheduled", True),
     ["status.updatedNumberScheduled is a boolean"]),
    (lambda k: k.daemon_set["status"].__setitem__("desiredNumberScheduled", -4),
     ["status.desiredNumberScheduled is not a count of nodes"]),
    (lambda k: k.daemon_set["spec"]["template"]["spec"].__setitem__("containers", "kube-proxy"),
     ["spec.template.spec.containers is a string, not an array"]),
    (lambda k: _count_is(k, "NaN"), ["apiserver_request_total of flowcontrol", "nan, not a count"]),
    (lambda k: _count_is(k, "-Inf"), ["-inf, not a count"]),
])
def test_wrong_types_and_nan_are_exit_3_naming_the_path(env, kube, inventory, change, words):
    change(kube)
    err = failed(agent(env), CLUSTER, *words)
    assert "internal error" not in err and inventory.posts == []


@pytest.mark.parametrize("body", [b'{"items": [NaN]}', b'{"items": [1e999999]', b"[1, 2]",
                                  b'"nodes"', b"\xff\xfe"])
def test_answers_that_are_not_a_json_object_are_exit_3(env, kube, body):
    kube.streams["/api/v1/nodes"] = (200, "application/json", [body])
    err = failed(agent(env), CLUSTER, "GET /api/v1/nodes")
    assert "internal error" not in err


def test_a_continue_token_that_is_not_a_string_is_exit_3(env, kube):
    kube.streams["/api/v1/nodes"] = (200, "application/json",
                                     [b'{"metadata": {"continue": 7}, "items": []}'])
    failed(agent(env), CLUSTER, "metadata.continue is a number, not a string")


# -- what is printed of a server's text ---------------------------------------

def test_an_api_server_that_echoes_authorization_has_it_redacted(env, kube, inventory):
    kube.streams["/version/"] = (401, "application/json", [json.dumps({
        "kind": "Status", "code": 401, "message": f"Unauthorized: request had Authorization: Bearer "
        f"{TOKEN}; token={TOKEN}\x1b[2J\r\nX-Injected: yes " + "y" * 5000}).encode()])
    err = failed(agent(env), CLUSTER, "refused to get /version", "401", "Unauthorized", "[redacted]")
    assert TOKEN not in err and "\x1b" not in err and "\r" not in err
    assert len(err) < 1000


def test_an_inventory_that_echoes_the_token_has_it_redacted(env, inventory):
    writer = env["INVENTORY_TOKEN"]
    inventory.answers = [(401, {}, {"status": 401, "detail": f"Bad token {writer} (Authorization: "
                                    f"Bearer {writer})", "errors": [{"location": f"header {writer}",
                                                                     "message": "\x07" * 10}]})]
    err = failed(agent(env), INVENTORY, "refused the scan: 401", "[redacted]", "INVENTORY_TOKEN")
    assert writer not in err and "\x07" not in err


def test_a_status_message_too_long_is_cut(env, kube):
    kube.streams["/metrics"] = (403, "application/json", [json.dumps(
        {"kind": "Status", "message": "forbidden " * 2_000}).encode()])
    err = failed(agent(env), CLUSTER, "refused to get /metrics", "403", "...")
    assert len(err) < 600


def test_an_inventory_answer_without_end_is_read_no_further_than_its_cap(env, inventory):
    inventory.stream = (201, "application/json", itertools.repeat(b'{"id": "' + b"k" * 65536))
    failed(agent(env), INVENTORY, "answered 201 with a body that is not a JSON object")


def test_an_inventory_answer_that_drips_is_tried_again_then_exit_4(env, inventory, pauses):

    def drip():
        for byte in b'{"id": "k8scs_x"}' * 10:
            time.sleep(0.1)
            yield bytes([byte])
    inventory.stream = (201, "application/json", drip)  # each try its own drip
    started = time.monotonic()
    failed(agent(env, "--timeout", "1"), INVENTORY, "could not be reached (4 tries)", "timed out")
    assert len(inventory.posts) == 4 and time.monotonic() - started < 30


def test_a_password_in_inventory_url_is_never_printed(env, kube):
    env["INVENTORY_URL"] = f"http://agent:s3cret-pass-word@127.0.0.1:{free_port()}"
    err = failed(agent(env, "--timeout", "2"), INVENTORY, "could not be reached",
                 "http://127.0.0.1:")
    assert "s3cret-pass-word" not in err and "agent:" not in err.split("inventory: ", 1)[1]


def test_a_password_in_a_bad_inventory_url_is_never_printed(env, kube):
    env["INVENTORY_URL"] = "ftp://agent:s3cret-pass-word@inventory.example.com/"
    err = failed(agent(env), 2, "INVENTORY_URL must be", "ftp://inventory.example.com/")
    assert "s3cret-pass-word" not in err


def test_a_password_in_the_kubeconfigs_server_is_never_printed(env, tmp_path):
    kubeconfig(tmp_path / "kubeconfig", f"http://admin:kube-s3cret-pw@127.0.0.1:{free_port()}")
    err = failed(agent(env, "--timeout", "2"), CLUSTER, "could not be reached")
    assert "kube-s3cret-pw" not in err


# -- kube-proxy: found, or found to run nowhere ------------------------------

def test_without_a_daemonset_kube_proxys_static_pods_give_its_versions(env, kube, inventory):
    kube.daemon_set = None  # GKE: kube-proxy as static pods
    kube.static_pods = [static_pod(f"n{i}") for i in range(3)]
    assert agent(env)[0] == 0
    nodes = inventory.posts[0][2]["nodes"]
    assert nodes["kube_proxy_versions"] == {"v1.30.5-gke.1014001": 3}
    assert "kube_proxy_found" not in nodes
    [pods] = [r for r in kube.requests if r.path.endswith("/pods")]
    assert pods.path == "/api/v1/namespaces/kube-system/pods"
    assert pods.query["labelSelector"] == ["component=kube-proxy"]


def test_with_neither_a_daemonset_nor_static_pods_none_runs(env, kube, inventory):
    kube.daemon_set = None  # Cilium's kube-proxy replacement, GKE Dataplane V2
    assert agent(env)[0] == 0
    nodes = inventory.posts[0][2]["nodes"]
    assert nodes["kube_proxy_found"] is False and nodes["kube_proxy_versions"] == {}


def test_a_daemonset_scheduled_nowhere_without_static_pods_runs_none(env, kube, inventory):
    kube.daemon_set = daemonset(updated=0, desired=0)  # turned off by a node selector
    assert agent(env)[0] == 0
    assert inventory.posts[0][2]["nodes"]["kube_proxy_found"] is False


def test_with_a_daemonset_no_pods_are_listed(env, kube, inventory):
    assert agent(env)[0] == 0
    assert not any(r.path.endswith("/pods") for r in kube.requests)
    assert "kube_proxy_found" not in inventory.posts[0][2]["nodes"]


def test_a_cluster_that_forbids_listing_the_kube_system_pods_is_exit_3(env, kube, inventory):
    kube.daemon_set = None
    kube.refuse["/api/v1/namespaces/kube-system/pods"] = 403
    failed(agent(env), CLUSTER, "refused to list the kube-system pods labelled component=kube-proxy",
           "403")
    assert inventory.posts == []


def test_off_the_main_thread_a_drip_still_ends_at_the_answers_time(env, kube):
    """Where no alarm can ring (a thread), each read returns what came and
    the answer's time is checked between them."""
    def drip():
        for byte in json.dumps(kube.version).encode() * 100:
            time.sleep(0.1)
            yield bytes([byte])
    kube.streams["/version/"] = (200, "application/json", drip())
    result = {}
    started = time.monotonic()
    worker = threading.Thread(target=lambda: result.update(run=agent(env, "--dry-run",
                                                                      "--timeout", "1")))
    worker.start()
    worker.join(60)
    assert not worker.is_alive()
    failed(result["run"], CLUSTER, "could not be reached to get /version", "timed out")
    assert time.monotonic() - started < 30
