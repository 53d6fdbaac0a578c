"""A Kubernetes API server on loopback for the agent's tests, answering as
one does the reads the agent makes: `/version`, `/api/v1/nodes` in pages
(`limit` and `continue`), the kube-system/kube-proxy DaemonSet, kube-proxy's
static pods (kube-system pods labelled `component=kube-proxy`), and the
`/metrics` exposition; it records each request, and can refuse (a status
with a `Status` body), answer slowly, or expire a continue token.

It can also be hostile, as a broken or malicious server is: `streams`
answers a path with bytes made as they are sent (an answer without end, one
that drips a byte at a time, a page of 300,000 nodes never held whole here),
and `endless_continue` pages the nodes with a new continue token forever.

Also `kubeconfig()`: a kubeconfig for it, whose user is a token or an exec
credential plugin (a script of the test's, run by the client)."""
import json
import pathlib
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import yaml

TOKEN = "kube-token-for-tests"
VERSION = {"major": "1", "minor": "31", "emulationMajor": "1", "emulationMinor": "31",
           "minCompatibilityMajor": "1", "minCompatibilityMinor": "30",
           "gitVersion": "v1.31.4-eks-2d5f260", "gitCommit": "2d5f260", "gitTreeState": "clean",
           "buildDate": "2026-10-01T00:00:00Z", "goVersion": "go1.24.9", "compiler": "gc",
           "platform": "linux/amd64"}

# An API server's /metrics, cut down: a histogram the agent skips, and the
# two families it reads (four deprecated APIs, requested by several verbs).
METRICS = (pathlib.Path(__file__).resolve().parents[1] / "data" / "apiserver-metrics.txt").read_text()


def node(name, kubelet="v1.31.4-eks-2d5f260", runtime="containerd://1.7.27",
         os_image="Amazon Linux 2023.6.20250203"):
    return {"kind": "Node", "apiVersion": "v1", "metadata": {"name": name},
            "status": {"nodeInfo": {
                "kubeletVersion": kubelet, "kubeProxyVersion": "", "containerRuntimeVersion": runtime,
                "osImage": os_image, "kernelVersion": "6.1.0", "operatingSystem": "linux",
                "architecture": "amd64"}}}


def daemonset(image="602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.31.3-minimal-eksbuild.2",
              updated=3, desired=3):
    return {"kind": "DaemonSet", "apiVersion": "apps/v1",
            "metadata": {"name": "kube-proxy", "namespace": "kube-system", "generation": 2},
            "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}},
                     "template": {"spec": {"containers": [{"name": "kube-proxy", "image": image}]}}},
            "status": {"desiredNumberScheduled": desired, "currentNumberScheduled": desired,
                       "numberReady": desired, "updatedNumberScheduled": updated,
                       "numberMisscheduled": 0, "observedGeneration": 2}}


def static_pod(node_name, image="gke.gcr.io/kube-proxy-amd64:v1.30.5-gke.1014001", phase="Running"):
    """A kube-proxy static pod's mirror, as GKE runs kube-proxy (no DaemonSet)."""
    return {"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": f"kube-proxy-{node_name}", "namespace": "kube-system",
                         "labels": {"component": "kube-proxy", "tier": "node"}},
            "spec": {"nodeName": node_name,
                     "containers": [{"name": "kube-proxy", "image": image}]},
            "status": {"phase": phase}}


class Request:
    def __init__(self, path, query, headers):
        self.path, self.query, self.headers = path, query, headers


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        pass  # a client that gave up (the agent past a bound): not the test's news


class LoopbackServer:
    """A threaded HTTP server on a free loopback port (`url`), serving a
    handler class until `close()`: the fake API server's and the agent
    tests' fake inventory's."""

    def serve(self, handler):
        self.server = _QuietServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def send(handler, status, headers, data):
    """Answer `status` with `headers` and the bytes `data`; nothing if the
    client gave up meanwhile (a timeout test)."""
    try:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:
        pass


def stream(handler, status, content_type, chunks):
    """Answer with the bytes of `chunks` as they are made, the answer's end
    the connection's (no Content-Length), until they end or the client goes.
    `chunks` may be a function that makes them: then each request has its own."""
    if callable(chunks):
        chunks = chunks()
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Connection", "close")
        handler.end_headers()
        for chunk in chunks:
            handler.wfile.write(chunk)
            handler.wfile.flush()
    except OSError:
        pass
    handler.close_connection = True


class KubeApi(LoopbackServer):
    """The fake API server; set its attributes before the agent runs."""

    def __init__(self, nodes=(), daemon_set=None, metrics=METRICS, token=TOKEN):
        self.nodes = list(nodes)
        self.daemon_set = daemon_set  # None: 404, as a cluster without one
        self.metrics = metrics
        self.version = dict(VERSION)
        self.token = token  # the bearer token it accepts
        self.refuse = {}  # path prefix -> status to refuse it with
        self.delay = 0.0  # seconds before each answer
        self.expire_continue_once = False  # answer 410 to the first continued list
        self.ignores_limit = False
        self.static_pods = []  # kube-system pods labelled component=kube-proxy
        self.streams = {}  # path -> (status, content type, an iterable of bytes sent as made)
        self.endless_continue = False  # every page of nodes has another continue token
        self.requests = []
        self.lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                url = urlsplit(self.path)
                with api.lock:
                    api.requests.append(Request(url.path, parse_qs(url.query),
                                                {k.lower(): v for k, v in self.headers.items()}))
                time.sleep(api.delay)
                if url.path in api.streams:
                    stream(self, *api.streams[url.path])
                    return
                status, content_type, body = api.answer(url.path, parse_qs(url.query),
                                                         self.headers.get("Authorization"))
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                send(self, status, {"Content-Type": content_type}, data)

            def log_message(self, *args):
                pass

        self.serve(Handler)

    def paths(self):
        return [request.path for request in self.requests]

    def _status(self, code, reason, message):
        return code, "application/json", {"kind": "Status", "apiVersion": "v1", "status": "Failure",
                                          "message": message, "reason": reason, "code": code}

    def answer(self, path, query, authorization):
        if authorization != f"Bearer {self.token}":
            return self._status(401, "Unauthorized", "Unauthorized")
        for prefix, code in self.refuse.items():
            if path.startswith(prefix):
                return self._status(code, "Forbidden", f'{path} is forbidden: User '
                                    '"system:serviceaccount:inventory:inventory-agent" cannot get it')
        if path in ("/version", "/version/"):
            return 200, "application/json", self.version
        if path == "/metrics":
            return 200, "text/plain; version=0.0.4; charset=utf-8", self.metrics.encode()
        if path == "/api/v1/nodes":
            return self._nodes(query)
        if path == "/api/v1/namespaces/kube-system/pods":
            selector = query.get("labelSelector", [""])[0]
            wanted = dict(term.split("=", 1) for term in selector.split(",") if "=" in term)
            items = [pod for pod in self.static_pods if wanted.items() <= pod["metadata"]["labels"].items()]
            return 200, "application/json", {"kind": "PodList", "apiVersion": "v1",
                                             "metadata": {"resourceVersion": "12345"}, "items": items}
        if path == "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy":
            if self.daemon_set is None:
                return self._status(404, "NotFound", 'daemonsets.apps "kube-proxy" not found')
            return 200, "application/json", self.daemon_set
        return self._status(404, "NotFound", "the server could not find the requested resource")

    def _nodes(self, query):
        token = query.get("continue", [""])[0]
        if token and self.expire_continue_once:
            self.expire_continue_once = False
            return self._status(410, "Expired", "The provided continue parameter is too old")
        start = int(token) if token else 0
        limit = int(query.get("limit", ["0"])[0]) or len(self.nodes)
        if self.ignores_limit:
            limit = len(self.nodes)
        page = self.nodes[start:start + limit]
        following = start + limit if start + limit < len(self.nodes) else None
        if self.endless_continue:
            page, following = self.nodes[:limit], start + limit
        metadata = {"resourceVersion": "12345"}
        if following is not None:
            metadata["continue"] = str(following)
            metadata["remainingItemCount"] = len(self.nodes) - following
        return 200, "application/json", {"kind": "NodeList", "apiVersion": "v1",
                                         "metadata": metadata, "items": page}


def kubeconfig(path, server, token=TOKEN, exec_script=None, exec_fails=None):
    """Write a kubeconfig for `server` to `path`: its user holds `token`, or
    is an exec credential plugin running the Python script `exec_script`
    (as aws eks get-token, gke-gcloud-auth-plugin or kubelogin are run),
    which fails saying `exec_fails` when given."""
    user = {"token": token}
    if exec_script is not None:
        env = [{"name": "TEST_EXEC_TOKEN", "value": token}]
        if exec_fails:
            env.append({"name": "TEST_EXEC_FAIL", "value": exec_fails})
        user = {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
                         "args": [str(exec_script)], "interactiveMode": "Never", "env": env}}
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "test",
        "clusters": [{"name": "test", "cluster": {"server": server}}],
        "users": [{"name": "test", "user": user}],
        "contexts": [{"name": "test", "context": {"cluster": "test", "user": "test"}}],
    }))
    return path


EXEC_PLUGIN = textwrap.dedent("""\
    # An exec credential plugin, as kubectl and the client run them: it
    # reads KUBERNETES_EXEC_INFO and prints an ExecCredential with a token.
    import json, os, sys
    info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
    if os.environ.get("TEST_EXEC_FAIL"):
        print("could not get a token: " + os.environ["TEST_EXEC_FAIL"], file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                      "status": {"token": os.environ["TEST_EXEC_TOKEN"]}}))
    """)
