"""What one scan by the agent costs, against a local API server
(tests/support/kube_api.py, in a process of its own) that serves N nodes
and a /metrics of M megabytes: the whole `--dry-run` scan's wall time, the
nodes' requests, and the agent's peaks of Python memory (tracemalloc, in
one more round each: reading the nodes, and the whole scan); and, in the
same run, its two choices against their baselines:

- pages of 500 nodes (`limit`/`continue`) against pages of 1000: time and
  memory (one list of every node, which the first runs measured at 6x the
  memory, is now past the agent's bound on one answer and refused);
- parsing /metrics after keeping only the two families the scan reads,
  against parsing the whole exposition with the same parser.

Medians of --rounds, in this process. Appends its table to agent_scan.txt.

    .venv/bin/python -m bench.agent_scan [--nodes 5000] [--metrics-mb 20] [--rounds 5]
"""
import argparse
import datetime
import gc
import io
import multiprocessing
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc

from prometheus_client.parser import text_string_to_metric_families

from inventory.agent import scan
from inventory.agent.cli import main
from inventory.agent.cluster import Cluster
from tests.support.kube_api import METRICS, KubeApi, daemonset, kubeconfig, node

HERE = os.path.dirname(os.path.abspath(__file__))


def big_metrics(megabytes):
    """METRICS with histograms the scan does not read, up to `megabytes`."""
    line = ('apiserver_request_duration_seconds_bucket{component="apiserver",dry_run="",'
            'group="apps",resource="deployments",scope="namespace",subresource="",verb="GET",'
            'version="v1",le="%s"} %d\n')
    filler, size, i = [], 0, 0
    target = megabytes * 1024 * 1024 - len(METRICS)
    while size < target:
        text = line % (f"{i % 40 / 10:.1f}", i)
        filler.append(text)
        size += len(text)
        i += 1
    return METRICS.replace("# HELP apiserver_request_total",
                           "".join(filler) + "# HELP apiserver_request_total", 1)


def real_node(i):
    """A node about as large as a real one (~11 KiB of JSON): labels,
    conditions, addresses and the 40 images its kubelet reports."""
    found = node(f"ip-10-0-{i // 250}-{i % 250}.ec2.internal",
                 kubelet="v1.31.4-eks-2d5f260" if i % 5 else "v1.30.8-eks-a737599")
    found["metadata"]["labels"] = {f"label-{k}.example.com/key": f"value-{k}" for k in range(12)}
    found["status"]["conditions"] = [
        {"type": kind, "status": "False", "reason": f"Kubelet{kind}", "message": "kubelet is fine " * 4,
         "lastHeartbeatTime": "2026-11-25T10:00:00Z", "lastTransitionTime": "2026-11-01T10:00:00Z"}
        for kind in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")]
    found["status"]["addresses"] = [{"type": "InternalIP", "address": f"10.0.{i // 250}.{i % 250}"}]
    found["status"]["images"] = [
        {"names": [f"123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app-{k}@sha256:{'a' * 64}",
                   f"123456789012.dkr.ecr.eu-west-1.amazonaws.com/team/app-{k}:1.{k}.0"],
         "sizeBytes": 100000000 + k} for k in range(40)]
    return found


def serve(conn, nodes, metrics):
    """The API server, in a child process: its memory is not the agent's."""
    api = KubeApi([real_node(i) for i in range(nodes)], daemonset(updated=nodes, desired=nodes), metrics)
    conn.send(api.url)
    while conn.recv() != "stop":
        conn.send(api.paths().count("/api/v1/nodes"))
    api.close()


def one_scan(config, page_size):
    out, err = io.StringIO(), io.StringIO()
    gc.collect()
    started = time.perf_counter()
    code = main(["--dry-run", "--page-size", str(page_size), "--timeout", "120"],
                {"KUBECONFIG": config}, out, err)
    elapsed = time.perf_counter() - started
    assert code == 0, err.getvalue()
    return elapsed


def read_nodes(config, page_size):
    cluster = Cluster(config, None, {}, 120)
    try:
        return cluster.nodes(page_size)
    finally:
        cluster.close()


def peak_mib(work):
    """The peak of Python memory allocated while `work` runs."""
    gc.collect()
    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def main_(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--metrics-mb", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(HERE, "agent_scan.txt"))
    args = parser.parse_args(argv)
    text = big_metrics(args.metrics_mb)
    conn, child = multiprocessing.Pipe()
    server = multiprocessing.get_context("fork").Process(target=serve, args=(child, args.nodes, text))
    server.start()
    url = conn.recv()
    lines = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            config = str(kubeconfig(pathlib.Path(tmp) / "kubeconfig", url))
            one_scan(config, 500)  # warm-up: imports, connections
            results = {}
            # (one list of them all is past the agent's bound on an answer,
            # bounds.MAX_ANSWER_BYTES: refused, so not measured)
            for label, page_size in (("pages of 500", 500), ("pages of 1000", 1000)):
                conn.send("count")
                before = conn.recv()
                times = [one_scan(config, page_size) for _ in range(args.rounds)]
                conn.send("count")
                node_requests = (conn.recv() - before) // args.rounds
                results[label] = (statistics.median(times), node_requests,
                                  peak_mib(lambda: read_nodes(config, page_size)),
                                  peak_mib(lambda: one_scan(config, page_size)))
    finally:
        conn.send("stop")
        server.join(30)
    parse_times = {}
    for label, parse in (("the two families only", scan.deprecated_api_requests),
                         ("the whole exposition", lambda t: list(text_string_to_metric_families(t)))):
        times = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            parse(text)
            times.append(time.perf_counter() - started)
        parse_times[label] = statistics.median(times)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    lines.append(f"# python -m bench.agent_scan --nodes {args.nodes} --metrics-mb {args.metrics_mb} "
                 f"--rounds {args.rounds}  ({datetime.date.today()}; nproc {os.cpu_count()}; "
                 f"python {platform.python_version()}; at {commit})")
    lines.append(f"a --dry-run scan of {args.nodes} nodes and a {args.metrics_mb} MiB /metrics; "
                 f"median of {args.rounds}")
    lines.append(f"{'nodes read as':28} {'scan s':>8} {'node requests':>14} {'nodes peak MiB':>15} "
                 f"{'scan peak MiB':>14}")
    for label, (seconds, requests, nodes_peak, scan_peak) in results.items():
        lines.append(f"{label:28} {seconds:8.2f} {requests:14d} {nodes_peak:15.1f} {scan_peak:14.1f}")
    paged, larger = results["pages of 500"], results["pages of 1000"]
    lines.append(f"pages of 500 / of 1000: {paged[0] / larger[0]:.2f}x the time, "
                 f"{paged[2] / larger[2]:.2f}x the nodes' peak memory")
    lines.append(f"{'/metrics parsed':28} {'s':>8}")
    for label, seconds in parse_times.items():
        lines.append(f"{label:28} {seconds:8.2f}")
    ratio = parse_times["the two families only"] / parse_times["the whole exposition"]
    lines.append(f"filtered / whole: {ratio:.2f}x the time")
    report = "\n".join(lines) + "\n"
    sys.stdout.write(report)
    with open(args.out, "a") as out:
        out.write(report)


if __name__ == "__main__":
    main_()
