"""What the agent reads from the cluster, with the official Kubernetes
client: `/version`, the nodes (in pages), the kube-proxy DaemonSet and the
API server's `/metrics`. Each read either answers or raises a
`ClusterError` (`ConfigurationError` for the way in), never a client
exception: the command line says each failure in one line.

Only those four reads are made, so the roles in docs/agent.md grant exactly
them (tests/unit/agent/test_agent_docs.py holds the two together).
"""
import json
import logging
import pathlib
import warnings
from typing import NamedTuple

import urllib3
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.config import incluster_config, kube_config
from kubernetes.config.config_exception import ConfigException

from inventory.agent import NAME, VERSION
from inventory.agent.failures import ClusterError, ConfigurationError

# kubectl's own chunk size: a page of nodes is a few hundred KiB, and a
# 5,000-node cluster is ten requests, never one answer of tens of MiB.
DEFAULT_PAGE_SIZE = 500
# kube-proxy's version is where kube-proxy really is: its DaemonSet (see
# `kube_proxy_versions`).
KUBE_PROXY_NAMESPACE, KUBE_PROXY_NAME = "kube-system", "kube-proxy"


class NodeInfo(NamedTuple):
    """What a node's `status.nodeInfo` says of it ("" where it says nothing)."""
    kubelet_version: str
    container_runtime: str
    os_image: str


def _configuration(kubeconfig, context, environ):
    """The client's configuration: the kubeconfig
    named by --kubeconfig or KUBECONFIG (which may list several files, as
    kubectl reads it); else the pod's service account when in a cluster;
    else ~/.kube/config. A kubeconfig's user may be an exec credential
    plugin (aws eks get-token, gke-gcloud-auth-plugin, kubelogin): the
    client runs it and uses the token or certificate it prints."""
    configuration = client.Configuration()
    path = kubeconfig or environ.get("KUBECONFIG", "")
    if not path and environ.get(incluster_config.SERVICE_HOST_ENV_NAME):
        if context:
            raise ConfigurationError("--context names a kubeconfig context, but no kubeconfig is "
                                     "in use (in a cluster, the pod's service account is)")
        loader = incluster_config.InClusterConfigLoader(
            token_filename=incluster_config.SERVICE_TOKEN_FILENAME,
            cert_filename=incluster_config.SERVICE_CERT_FILENAME, environ=environ)
        try:
            loader.load_and_set(configuration)
        except (ConfigException, OSError) as error:
            raise ConfigurationError(f"in-cluster configuration: {error}") from None
        return configuration
    if not path:
        path = str(pathlib.Path(environ.get("HOME") or "~").expanduser() / ".kube" / "config")
        if not pathlib.Path(path).is_file():
            raise ConfigurationError(
                "no cluster to scan: not in a cluster (KUBERNETES_SERVICE_HOST is not set) and no "
                f"kubeconfig (--kubeconfig, KUBECONFIG, or {path})")
    # The client logs (rather than raises) an exec plugin's failure and goes
    # on without credentials; what it logs is the reason, said here at once.
    logged = _Logged()
    root = logging.getLogger()
    root.addHandler(logged)
    try:
        kube_config.load_kube_config(config_file=path, context=context,
                                     client_configuration=configuration, persist_config=False)
    except (ConfigException, OSError, yaml.YAMLError, ValueError, KeyError, TypeError) as error:
        raise ConfigurationError(f"kubeconfig {path}: {_one_line(error)}") from None
    finally:
        root.removeHandler(logged)
    if logged.messages:
        raise ConfigurationError(f"kubeconfig {path}: the user's credentials could not be had: "
                                 f"{logged.messages[0]}")
    return configuration


class _Logged(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(_one_line(record.getMessage()))


def _one_line(text):
    return " ".join(str(text).split())


class Cluster:
    """The cluster's API server, through the client, with a timeout on
    every request."""

    def __init__(self, kubeconfig=None, context=None, environ=None, timeout=30.0):
        configuration = _configuration(kubeconfig, context, environ or {})
        # Connection errors are retried twice by urllib3; a read that timed
        # out is not (it would only wait as long again).
        configuration.retries = urllib3.Retry(total=2, connect=2, read=0, status=0, other=0,
                                              redirect=False, backoff_factor=0.5)
        self.host = configuration.host
        self.timeout = (timeout, timeout)
        self.api = client.ApiClient(configuration)
        self.api.user_agent = f"{NAME}/{VERSION}"

    def close(self):
        self.api.close()

    def _read(self, what, call):
        """`call()`, with the client's failures made one line each."""
        try:
            with warnings.catch_warnings():
                # a kubeconfig's insecure-skip-tls-verify: its choice, not news
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                return call()
        except ApiException as error:
            if not error.status:  # the client's way of saying TLS failed
                raise ClusterError(f"{self.host} could not be reached to {what}: "
                                   f"{_one_line(error.reason)}") from None
            raise ClusterError(f"{self.host} refused to {what}: {error.status} {error.reason}"
                               f"{_status_message(error.body)}", status=error.status) from None
        except (urllib3.exceptions.HTTPError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise ClusterError(f"{self.host} could not be reached to {what}: "
                               f"{_one_line(reason)}") from None

    def git_version(self):
        """The API server's `/version` `gitVersion`, e.g. `v1.30.4-eks-a737599`
        (read as JSON: a distribution may leave out fields the typed model
        requires, and only this one matters here)."""
        answer = self._read("get /version", lambda: client.VersionApi(self.api).get_code(
            _preload_content=False, _request_timeout=self.timeout))
        version = _json(answer.data, "/version").get("gitVersion")
        if not isinstance(version, str) or not version:
            raise ClusterError(f"{self.host}'s /version has no gitVersion")
        return version

    def node_infos(self, page_size=DEFAULT_PAGE_SIZE) -> list[NodeInfo]:
        """Each node's `status.nodeInfo` versions, read a page of at most
        `page_size` nodes at a time (`limit` and `continue`). Each page is
        read as plain JSON and only three fields of each node are kept: a
        typed model of hundreds of nodes a page would only cost time. A list
        whose `continue` token expired (410, after minutes) is read again
        from the start, once."""
        for attempt in (1, 2):
            try:
                return list(self._node_infos(page_size))
            except ClusterError as error:
                if error.status != 410 or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def _node_infos(self, page_size):
        core = client.CoreV1Api(self.api)
        token, seen = "", set()
        while True:
            answer = self._read("list nodes", lambda token=token: core.list_node(
                limit=page_size, _continue=token or None, _preload_content=False,
                _request_timeout=self.timeout))
            page = _json(answer.data, "the nodes' list")
            for node in page.get("items") or []:
                info = ((node or {}).get("status") or {}).get("nodeInfo") or {}
                yield NodeInfo(info.get("kubeletVersion") or "",
                               info.get("containerRuntimeVersion") or "", info.get("osImage") or "")
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                return
            if token in seen:  # a server that pages in circles would never end
                raise ClusterError(f"{self.host} answered the same nodes' continue token twice")
            seen.add(token)

    def kube_proxy(self):
        """The kube-system/kube-proxy DaemonSet as JSON, or None when the
        cluster has none (kube-proxy replaced, as by Cilium, or run as
        static pods, as GKE does)."""
        apps = client.AppsV1Api(self.api)
        try:
            answer = self._read("get the kube-system/kube-proxy DaemonSet", lambda: (
                apps.read_namespaced_daemon_set(KUBE_PROXY_NAME, KUBE_PROXY_NAMESPACE,
                                                _preload_content=False,
                                                _request_timeout=self.timeout)))
        except ClusterError as error:
            if error.status == 404:
                return None
            raise
        return _json(answer.data, "the kube-proxy DaemonSet")

    def metrics_lines(self):
        """The API server's `/metrics` exposition, line by line as it
        arrives: it can be tens of MiB, of which the scan keeps a few
        hundred lines, so it is never held whole."""
        def call():
            request = self.api.param_serialize(
                method="GET", resource_path="/metrics",
                header_params={"Accept": "text/plain; version=0.0.4"},
                auth_settings=["BearerToken"])
            answer = self.api.call_api(*request, _request_timeout=self.timeout)
            if not 200 <= answer.status <= 299:
                answer.read()
                raise ApiException(http_resp=answer)
            return answer.response
        response = self._read("get /metrics", call)
        try:
            rest = b""
            for chunk in response.stream(1 << 16):
                *lines, rest = (rest + chunk).split(b"\n")
                for line in lines:
                    yield line.decode("utf-8", "replace")
            if rest:
                yield rest.decode("utf-8", "replace")
        except (urllib3.exceptions.HTTPError, OSError) as error:
            reason = getattr(error, "reason", None) or error
            raise ClusterError(f"{self.host} could not be reached to read /metrics: "
                               f"{_one_line(reason)}") from None
        finally:
            response.release_conn()


def _json(data, what):
    try:
        value = json.loads(data)
    except ValueError:
        raise ClusterError(f"{what} is not JSON") from None
    if not isinstance(value, dict):
        raise ClusterError(f"{what} is not a JSON object")
    return value


def _status_message(body):
    """The API server's reason, from its `Status` body when it sent one."""
    if not body:
        return ""
    try:
        message = json.loads(body).get("message")
    except (ValueError, AttributeError):
        message = None
    return f": {_one_line(message)}" if message else ""
