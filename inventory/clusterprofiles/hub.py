"""The hub cluster's ClusterProfiles in one namespace, with the official
Kubernetes client: list, create, patch, patch status, delete. Only those,
so that the Role in docs/clusterprofiles.md grants exactly them
(`clusterprofiles`: get, list, create, patch, delete;
`clusterprofiles/status`: patch). Each call answers or raises a
`HubError` of one line (`status` the API server's, when it answered)."""
import json
import warnings

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from inventory.clusterprofiles import NAME, VERSION
from inventory.clusterprofiles.profiles import API_VERSION, GROUP, PLURAL, held_parts
from inventory.kube import configuration as kube_configuration

MERGE_PATCH = "application/merge-patch+json"


class HubError(Exception):
    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


def configuration(kubeconfig, context, environ):
    """The hub's client configuration, found as kubectl finds it
    (inventory.kube.configuration)."""
    try:
        return kube_configuration.load(kubeconfig, context, environ)
    except kube_configuration.ConfigurationError as error:
        raise HubError(_one_line(error)) from None


class Hub:
    """The ClusterProfiles of `namespace`."""

    def __init__(self, config, namespace, timeout=30.0):
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
