"""A Kubernetes client's configuration, found as kubectl finds it: the
kubeconfig named by --kubeconfig or KUBECONFIG (which may list several
files); else the pod's service account when in a cluster; else
~/.kube/config. A kubeconfig's user may be an exec credential plugin (aws
eks get-token, gke-gcloud-auth-plugin, kubelogin): the client runs it and
uses the token or certificate it prints."""
import logging
import pathlib

import urllib3
import yaml
from kubernetes import client
from kubernetes.config import incluster_config, kube_config
from kubernetes.config.config_exception import ConfigException


class ConfigurationError(Exception):
    """Why no configuration could be had. Its text may hold what a file or
    a credential plugin said: each client says it its own way (the agent
    redacts it)."""


def load(kubeconfig, context, environ):
    """The client's configuration (`environ`: the environment to read), its
    retries set: connection errors are retried twice by urllib3; a read that
    timed out is not (it would only wait as long again)."""
    configuration = client.Configuration()
    path = kubeconfig or environ.get("KUBECONFIG", "")
    if not path and environ.get(incluster_config.SERVICE_HOST_ENV_NAME):
        if context:
            raise ConfigurationError("--context names a kubeconfig context, but no kubeconfig "
                                     "is in use (in a cluster, the pod's service account is)")
        loader = incluster_config.InClusterConfigLoader(
            token_filename=incluster_config.SERVICE_TOKEN_FILENAME,
            cert_filename=incluster_config.SERVICE_CERT_FILENAME, environ=environ)
        try:
            loader.load_and_set(configuration)
        except (ConfigException, OSError) as error:
            raise ConfigurationError(f"in-cluster configuration: {error}") from None
    else:
        _load_kubeconfig(configuration, path, context, environ)
    configuration.retries = urllib3.Retry(total=2, connect=2, read=0, status=0, other=0,
                                          redirect=False, backoff_factor=0.5)
    return configuration


def _load_kubeconfig(configuration, path, context, environ):
    if not path:
        path = str(pathlib.Path(environ.get("HOME") or "~").expanduser() / ".kube" / "config")
        if not pathlib.Path(path).is_file():
            raise ConfigurationError(
                "not in a cluster (KUBERNETES_SERVICE_HOST is not set) and no kubeconfig "
                f"(--kubeconfig, KUBECONFIG, or {path})")
    # The client logs (rather than raises) an exec plugin's failure and goes
    # on without credentials; what it logs is the reason, said here at once.
    logged = _Logged()
    root = logging.getLogger()
    root.addHandler(logged)
    try:
        kube_config.load_kube_config(config_file=path, context=context,
                                     client_configuration=configuration, persist_config=False)
    except (ConfigException, OSError, yaml.YAMLError, ValueError, KeyError, TypeError) as error:
        raise ConfigurationError(f"kubeconfig {path}: {error}") from None
    finally:
        root.removeHandler(logged)
    if logged.messages:
        raise ConfigurationError(f"kubeconfig {path}: the user's credentials could not be "
                                 f"had: {logged.messages[0]}")


class _Logged(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())
