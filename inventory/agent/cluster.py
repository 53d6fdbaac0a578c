"""What the agent reads from the cluster, with the official Kubernetes
client: `/version`, the nodes (in pages), the kube-proxy DaemonSet (and,
when there is none, kube-proxy's static pods) and the API server's
`/metrics`. Each read either answers or raises a `ClusterError`
(`ConfigurationError` for the way in), never a client exception: the
command line says each failure in one line.

Every answer is read as it streams, within the bounds of `bounds` (its
bytes, its time whole, the pages and nodes of a list), and every field
kept is checked for its type: a broken or hostile API server is a
`ClusterError` naming the path and the field, never an exception of ours.
What the server says of a refusal is printed only through `redaction`.

Only those reads are made, so the roles in docs/agent.md grant exactly
them (tests/unit/agent/test_agent_docs.py holds the two together).
"""
import hashlib
import json
import math
import warnings

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from inventory.agent import NAME, VERSION, bounds
from inventory.agent.failures import ClusterError, ConfigurationError
from inventory.agent.redaction import server_text, without_userinfo
from inventory.agent.scan import (
    NodeTally,
    deprecated_api_requests,
    kube_proxy_of_daemonset,
    kube_proxy_of_pods,
)
from inventory.kube import configuration as kube_configuration

# kubectl's own chunk size: a page of nodes is a few hundred KiB, and a
# 5,000-node cluster is ten requests, never one answer of tens of MiB.
DEFAULT_PAGE_SIZE = 500
# kube-proxy's version is where kube-proxy really is: its DaemonSet, else
# its static pods (GKE's, RKE2's: labelled `component=kube-proxy`); see
# scan.kube_proxy_of_daemonset.
KUBE_PROXY_NAMESPACE, KUBE_PROXY_NAME = "kube-system", "kube-proxy"
KUBE_PROXY_STATIC_PODS = "component=kube-proxy"
NODES_PATH = "/api/v1/nodes"
DAEMONSET_PATH = f"/apis/apps/v1/namespaces/{KUBE_PROXY_NAMESPACE}/daemonsets/{KUBE_PROXY_NAME}"
PODS_PATH = f"/api/v1/namespaces/{KUBE_PROXY_NAMESPACE}/pods"
READ_SIZE = 1 << 16
# The keys of the API server's JSON that anything here reads: all others
# are let go as each object is parsed, so that a page holds only these.
_KEPT_KEYS = frozenset({
    "gitVersion", "items", "metadata", "continue", "status", "nodeInfo", "kubeletVersion",
    "containerRuntimeVersion", "osImage", "spec", "template", "containers", "name", "image",
    "updatedNumberScheduled", "desiredNumberScheduled", "phase", "message"})


class Cluster:
    """The cluster's API server, through the client, every answer bounded
    in time (`clock`) and size (`bounds`)."""

    def __init__(self, kubeconfig=None, context=None, environ=None, timeout=30.0, clock=None):
        try:
            configuration = kube_configuration.load(kubeconfig, context, environ or {})
        except kube_configuration.ConfigurationError as error:
            text = server_text(error)
            if text.startswith("not in a cluster"):
                text = f"no cluster to scan: {text}"
            raise ConfigurationError(text) from None
        self.configuration = configuration
        self.host = without_userinfo(configuration.host)
        self.clock = clock or bounds.Clock(bounds.DEFAULT_DEADLINE, timeout)
        self.api = client.ApiClient(configuration)
        self.api.user_agent = f"{NAME}/{VERSION}"

    def close(self):
        self.api.close()

    def credentials(self):
        """The credentials the client holds (never to be printed)."""
        held = [self.configuration.password]
        for value in (self.configuration.api_key or {}).values():
            held += [value, str(value).split(" ", 1)[-1]]  # "bearer <token>", and the token
        return [str(value) for value in held if value]

    # -- one request, bounded ------------------------------------------------

    def _get(self, path, what, query=(), accept="application/json"):
        """GET `path`: the urllib3 response, its status a success; a refusal
        is a ClusterError with the server's reason (filtered). Called within
        `self._answer(what)`."""
        request = self.api.param_serialize(
            method="GET", resource_path=path, query_params=list(query),
            header_params={"Accept": accept}, auth_settings=["BearerToken"])
        timeout = self.clock.socket_timeout()
        answer = self.api.call_api(*request, _request_timeout=(timeout, timeout))
        response = answer.response
        if not 200 <= answer.status <= 299:
            body = self._bytes(response, bounds.MAX_ERROR_BYTES, what, truncate=True)
            raise ClusterError(f"{self.host} refused to {what}: {answer.status} "
                               f"{server_text(answer.reason or '', self.credentials())}"
                               f"{_status_message(body, self.credentials())}",
                               status=answer.status)
        return response

    def _answer(self, what):
        return _Answer(self, what)

    def _bytes(self, response, cap, what, truncate=False):
        """The response's body, read as it streams: at most `cap` bytes (a
        longer one is a ClusterError, or with `truncate` its first `cap`)."""
        length = response.headers.get("Content-Length", "")
        if not truncate and length.isdigit() and int(length) > cap:
            response.close()
            raise ClusterError(f"{self.host} answered {what} with {int(length):,} bytes, "
                               f"more than the {cap:,} the agent reads of one answer")
        data = bytearray()
        try:
            while chunk := response.read1(READ_SIZE):
                data += chunk
                if len(data) > cap:
                    if truncate:
                        return bytes(data[:cap])
                    raise ClusterError(f"{self.host} answered {what} with more than the "
                                       f"{cap:,} bytes the agent reads of one answer")
                self.clock.check()
        finally:
            response.close()
        return bytes(data)

    def _json(self, path, what, query=()):
        """GET `path` as a JSON object, of which only the keys read here are kept."""
        with self._answer(what):
            response = self._get(path, what, query)
            data = self._bytes(response, bounds.MAX_ANSWER_BYTES, what)
        return _parsed(data, path)

    # -- the reads ---------------------------------------------------------

    def git_version(self):
        """The API server's `/version` `gitVersion`, e.g. `v1.30.4-eks-a737599`
        (read as JSON: a distribution may leave out fields the typed model
        requires, and only this one matters here)."""
        path = "/version/"  # the client's path (and what the ClusterRole grants)
        version = _field(self._json(path, "get /version"), ("gitVersion",), str, path)
        if not version:
            raise ClusterError(f"{self.host}'s /version has no gitVersion")
        if len(version) > 100 or not version.isprintable():
            raise ClusterError(f"{self.host}'s /version: gitVersion is not a Kubernetes version")
        return version

    def _list(self, path, what, page_size, query=()):
        """Each item of a list, read a page of at most `page_size` at a time
        (`limit` and `continue`), within MAX_PAGES pages; each item an object."""
        token, seen = "", set()
        for _ in range(bounds.MAX_PAGES):
            page = self._json(path, what, [*query, ("limit", page_size),
                                           *([("continue", token)] if token else [])])
            for index, item in enumerate(_field(page, ("items",), list, path) or ()):
                if not isinstance(item, dict):
                    raise ClusterError(f"GET {path}: items[{index}] is {_json_type(item)}, "
                                       "not an object")
                yield path, index, item
            token = _field(page, ("metadata", "continue"), str, path)
            if not token:
                return
            if len(token) > bounds.MAX_CONTINUE:
                raise ClusterError(f"GET {path}: metadata.continue is longer than "
                                   f"{bounds.MAX_CONTINUE:,} characters")
            digest = hashlib.blake2b(token.encode(), digest_size=16).digest()
            if digest in seen:  # a server that pages in circles would never end
                raise ClusterError(f"{self.host} answered the same continue token twice "
                                   f"to {what}")
            seen.add(digest)
        raise ClusterError(f"{self.host} answered more than {bounds.MAX_PAGES:,} pages to {what} "
                           "(continue tokens without end)")

    def nodes(self, page_size=DEFAULT_PAGE_SIZE) -> NodeTally:
        """Each node's `status.nodeInfo` versions, tallied as the pages come
        (a page is let go once counted). Only three fields of each node are
        kept: a typed model of hundreds of nodes a page would only cost time.
        A list whose `continue` token expired (410, after minutes) is read
        again from the start, once."""
        for attempt in (1, 2):
            tally = NodeTally()
            try:
                for path, index, node in self._list(NODES_PATH, "list nodes", page_size):
                    if tally.count >= bounds.MAX_NODES:
                        raise ClusterError(f"{self.host} listed more than {bounds.MAX_NODES:,} "
                                           "nodes, the most a scan records")
                    at = f"items[{index}].status.nodeInfo"
                    info = _field(node, ("status", "nodeInfo"), dict, path, at=f"items[{index}]")
                    tally.add(*(_field(info or {}, (name,), str, path, at=at) for name in (
                        "kubeletVersion", "containerRuntimeVersion", "osImage")))
                return tally
            except ClusterError as error:
                if error.status != 410 or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def kube_proxy(self, page_size=DEFAULT_PAGE_SIZE):
        """Whether kube-proxy runs, and its versions: `(found, {version:
        nodes})`. From the kube-system/kube-proxy DaemonSet when one runs on
        any node; else from kube-proxy's static pods (GKE's, RKE2's); else
        none runs (replaced, as by Cilium or GKE Dataplane V2)."""
        try:
            daemonset = self._json(DAEMONSET_PATH, "get the kube-system/kube-proxy DaemonSet")
        except ClusterError as error:
            if error.status != 404:
                raise
            daemonset = None
        if daemonset is not None:
            found = kube_proxy_of_daemonset(_checked_daemonset(daemonset))
            if found is not None:
                return True, found
        pods = [_checked_pod(pod, path, index) for path, index, pod in self._list(
            PODS_PATH, "list the kube-system pods labelled component=kube-proxy", page_size,
            [("labelSelector", KUBE_PROXY_STATIC_PODS)])]
        return kube_proxy_of_pods(pods)

    def deprecated_api_requests(self, parse=deprecated_api_requests):
        """The deprecated APIs requested, as `parse` makes them of the API
        server's `/metrics` exposition, fed to it line by line as it arrives:
        it can be tens of MiB, of which the scan keeps a few hundred lines,
        so it is never held whole. At most MAX_METRICS_BYTES in all, each
        line at most MAX_METRICS_LINE, read and parsed within one answer's time."""
        what = "get /metrics"
        with self._answer(what):
            response = self._get("/metrics", what, accept="text/plain; version=0.0.4")
            try:
                return parse(self._lines(response))
            finally:
                response.close()

    def _lines(self, response):
        rest, read = b"", 0
        while chunk := response.read1(READ_SIZE):
            read += len(chunk)
            if read > bounds.MAX_METRICS_BYTES:
                raise ClusterError(f"{self.host}'s /metrics is longer than the "
                                   f"{bounds.MAX_METRICS_BYTES:,} bytes the agent reads")
            *lines, rest = (rest + chunk).split(b"\n")
            if len(rest) > bounds.MAX_METRICS_LINE or any(
                    len(line) > bounds.MAX_METRICS_LINE for line in lines):
                raise ClusterError(f"{self.host}'s /metrics has a line longer than "
                                   f"{bounds.MAX_METRICS_LINE:,} bytes")
            for line in lines:
                yield line.decode("utf-8", "replace")
            self.clock.check()
        if rest:
            yield rest.decode("utf-8", "replace")


class _Answer:
    """One request to the API server and its whole answer, in the clock's
    time, with the client's failures made one ClusterError each."""

    def __init__(self, cluster, what):
        self.cluster, self.what = cluster, what
        self.timing = cluster.clock.answer()
        self.warnings = warnings.catch_warnings()

    def __enter__(self):
        self.warnings.__enter__()
        # a kubeconfig's insecure-skip-tls-verify: its choice, not news
        warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
        self.timing.__enter__()

    def __exit__(self, kind, error, traceback):
        try:
            self.timing.__exit__(kind, error, traceback)
        finally:
            self.warnings.__exit__(kind, error, traceback)
        cluster, what = self.cluster, self.what
        if kind is None or issubclass(kind, (ClusterError, bounds.DeadlineExceeded)):
            return False
        if issubclass(kind, bounds.AnswerTimedOut):
            raise ClusterError(f"{cluster.host} could not be reached to {what}: timed out "
                               f"(no whole answer within {cluster.clock.answer_seconds:g} s)"
                               ) from None
        if issubclass(kind, ApiException):  # the client's way of saying TLS failed
            raise ClusterError(f"{cluster.host} could not be reached to {what}: "
                               f"{server_text(error.reason, cluster.credentials())}") from None
        if issubclass(kind, (urllib3.exceptions.HTTPError, OSError)):
            reason = getattr(error, "reason", None) or error
            raise ClusterError(f"{cluster.host} could not be reached to {what}: "
                               f"{server_text(reason, cluster.credentials())}") from None
        return False


def _refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def _kept(pairs):
    return {key: value for key, value in pairs if key in _KEPT_KEYS}


def _parsed(data, path):
    """The answer's JSON object, with only the keys read here (NaN and
    Infinity are not JSON: refused)."""
    if data.count(b",") > bounds.MAX_ANSWER_VALUES:
        raise ClusterError(f"GET {path}: the answer holds more than "
                           f"{bounds.MAX_ANSWER_VALUES:,} JSON values")
    try:
        value = json.loads(data, object_pairs_hook=_kept, parse_constant=_refuse_constant)
    except (ValueError, RecursionError):
        raise ClusterError(f"GET {path}: the answer is not JSON") from None
    if not isinstance(value, dict):
        raise ClusterError(f"GET {path}: the answer is {_json_type(value)}, not a JSON object")
    return value


def _json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return {str: "a string", list: "an array", dict: "an object"}.get(type(value), "a value")


_NAMED = {str: "a string", list: "an array", dict: "an object", int: "a whole number"}


def _field(value, keys, kind, path, at=""):
    """`value[keys[0]][keys[1]]...`, which must be a `kind` (or absent or
    null: None); else a ClusterError naming the path and the field."""
    where = at
    for key in keys:
        where = f"{where}.{key}" if where else key
        if not isinstance(value, dict):
            return None
        value = value.get(key)
        if value is None:
            return None
    wrong = (not isinstance(value, kind) or (kind is int and isinstance(value, bool))
             or (isinstance(value, float) and not math.isfinite(value)))
    if wrong:
        raise ClusterError(f"GET {path}: {where} is {_json_type(value)}, not {_NAMED[kind]}")
    return value


def _checked_daemonset(daemonset):
    """The DaemonSet's fields the scan reads, each of its type."""
    path = DAEMONSET_PATH
    containers = _field(daemonset, ("spec", "template", "spec", "containers"), list, path) or []
    checked = _checked_containers(containers, path, "spec.template.spec.containers")
    status = {name: _field(daemonset, ("status", name), int, path)
              for name in ("updatedNumberScheduled", "desiredNumberScheduled")}
    for name, count in status.items():
        if count is not None and not 0 <= count <= bounds.MAX_NODES:
            raise ClusterError(f"GET {path}: status.{name} is not a count of nodes")
    return {"containers": checked, **status}


def _checked_pod(pod, path, index):
    at = f"items[{index}]"
    containers = _field(pod, ("spec", "containers"), list, path, at) or []
    return {"containers": _checked_containers(containers, path, f"{at}.spec.containers"),
            "phase": _field(pod, ("status", "phase"), str, path, at) or ""}


def _checked_containers(containers, path, at):
    """Each container's name and image, each of its type (`at`: where the
    list is in the answer of `path`)."""
    checked = []
    for index, container in enumerate(containers):
        where = f"{at}[{index}]"
        if not isinstance(container, dict):
            raise ClusterError(f"GET {path}: {where} is {_json_type(container)}, not an object")
        checked.append({"name": _field(container, ("name",), str, path, where) or "",
                        "image": _field(container, ("image",), str, path, where) or ""})
    return checked


def _status_message(body, secrets):
    """The API server's reason, from its `Status` body when it sent one (filtered)."""
    if not body:
        return ""
    try:
        message = json.loads(body).get("message")
    except (ValueError, AttributeError, RecursionError):
        message = None
    return f": {server_text(message, secrets)}" if isinstance(message, str) and message else ""
