"""The hub cluster's ClusterProfiles in one namespace, with the official
Kubernetes client: list, create, patch, patch status, delete. Only those,
so that the Role in docs/clusterprofiles.md grants exactly them
(`clusterprofiles`: get, list, create, patch, delete;
`clusterprofiles/status`: patch). Each call answers or raises a
`HubError` of one line (`status` the API server's, when it answered)."""
import json
import logging
import pathlib
import warnings

import urllib3
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.config import incluster_config, kube_config
from kubernetes.config.config_exception import ConfigException

from inventory.clusterprofiles import NAME, VERSION
from inventory.clusterprofiles.profiles import API_VERSION, GROUP, PLURAL, held_parts

MERGE_PATCH = "application/merge-patch+json"


class HubError(Exception):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def configuration(kubeconfig, context, environ):
    """--kubeconfig or KUBECONFIG (exec credential plugins included); else
    the pod's service account in a cluster; else ~/.kube/config."""
    config = client.Configuration()
    path = kubeconfig or environ.get("KUBECONFIG", "")
    if not path and environ.get(incluster_config.SERVICE_HOST_ENV_NAME):
        loader = incluster_config.InClusterConfigLoader(
            token_filename=incluster_config.SERVICE_TOKEN_FILENAME,
            cert_filename=incluster_config.SERVICE_CERT_FILENAME, environ=environ)
        try:
            loader.load_and_set(config)
        except (ConfigException, OSError) as error:
            raise HubError(f"in-cluster configuration: {_one_line(error)}") from None
        return config
    if not path:
        path = str(pathlib.Path(environ.get("HOME") or "~").expanduser() / ".kube" / "config")
    logged = _Logged()  # the client logs, rather than raises, an exec plugin's failure
    root = logging.getLogger()
    root.addHandler(logged)
    try:
        kube_config.load_kube_config(config_file=path, context=context,
                                     client_configuration=config, persist_config=False)
    except (ConfigException, OSError, yaml.YAMLError, ValueError, KeyError, TypeError) as error:
        raise HubError(f"kubeconfig {path}: {_one_line(error)}") from None
    finally:
        root.removeHandler(logged)
    if logged.messages:
        raise HubError(f"kubeconfig {path}: the user's credentials could not be had: "
                       f"{logged.messages[0]}")
    return config


class _Logged(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(_one_line(record.getMessage()))


class Hub:
    """The ClusterProfiles of `namespace`."""

    def __init__(self, config, namespace, timeout=30.0):
        config.retries = urllib3.Retry(total=2, connect=2, read=0, status=0, other=0,
                                       redirect=False, backoff_factor=0.5)
        self.namespace = namespace
        self.timeout = (timeout, timeout)
        self.api_client = client.ApiClient(config)
        self.api_client.user_agent = f"{NAME}/{VERSION}"
        self.api = client.CustomObjectsApi(self.api_client)

    def close(self):
        self.api_client.close()

    def _call(self, what, call):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", urllib3.exceptions.InsecureRequestWarning)
                return call()
        except ApiException as error:
            raise HubError(f"{what}: {error.status} {_reason(error)}", error.status) from None
        except urllib3.exceptions.HTTPError as error:
            raise HubError(f"{what}: the hub could not be reached: {_one_line(error)}") from None

    def profiles(self):
        """Every ClusterProfile of the namespace (whatever its manager), by
        name, read in pages, each as the syncer keeps it (`held_parts`)."""
        found, token = {}, None
        while True:
            page = self._call(f"list clusterprofiles in {self.namespace}", lambda token=token: (
                self.api.list_namespaced_custom_object(
                    GROUP, API_VERSION, self.namespace, PLURAL, limit=500,
                    _continue=token, _request_timeout=self.timeout)))
            for item in page.get("items") or []:
                found[item["metadata"]["name"]] = held_parts(item)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return found

    def read(self, name):
        """The profile, or None when there is none."""
        try:
            return self._call(f"get clusterprofile {name}", lambda: (
                self.api.get_namespaced_custom_object(GROUP, API_VERSION, self.namespace, PLURAL,
                                                      name, _request_timeout=self.timeout)))
        except HubError as error:
            if error.status == 404:
                return None
            raise

    def create(self, body):
        return self._call(f"create clusterprofile {body['metadata']['name']}", lambda: (
            self.api.create_namespaced_custom_object(GROUP, API_VERSION, self.namespace, PLURAL,
                                                     body, _request_timeout=self.timeout)))

    def patch(self, name, patch):
        return self._call(f"patch clusterprofile {name}", lambda: (
            self.api.patch_namespaced_custom_object(
                GROUP, API_VERSION, self.namespace, PLURAL, name, patch,
                _content_type=MERGE_PATCH, _request_timeout=self.timeout)))

    def patch_status(self, name, status):
        return self._call(f"patch clusterprofile {name}'s status", lambda: (
            self.api.patch_namespaced_custom_object_status(
                GROUP, API_VERSION, self.namespace, PLURAL, name, {"status": status},
                _content_type=MERGE_PATCH, _request_timeout=self.timeout)))

    def delete(self, name, uid):
        """Delete the profile, only if it is still the one of `uid` (a
        profile made anew meanwhile, maybe by another manager, stays)."""
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}}
        try:
            self._call(f"delete clusterprofile {name}", lambda: (
                self.api.delete_namespaced_custom_object(
                    GROUP, API_VERSION, self.namespace, PLURAL, name, body=body,
                    _request_timeout=self.timeout)))
        except HubError as error:
            if error.status != 404:
                raise


def _reason(error):
    """The API server's Status message, else its HTTP reason."""
    try:
        status = json.loads(error.body or "")
    except (TypeError, ValueError):
        status = None
    if isinstance(status, dict) and status.get("message"):
        return _one_line(status["message"])
    return _one_line(error.reason or "")


def _one_line(text):
    return " ".join(str(text).split())
