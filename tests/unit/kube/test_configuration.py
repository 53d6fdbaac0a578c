"""The Kubernetes client's configuration as kubectl finds it, shared by
the agent and the ClusterProfile syncer (their own tests run each through
its command line)."""
import pytest
from kubernetes.config import incluster_config

from inventory.kube import configuration
from tests.support.kube_api import kubeconfig

POD = {"KUBERNETES_SERVICE_HOST": "10.100.0.1", "KUBERNETES_SERVICE_PORT": "443"}


@pytest.fixture
def service_account(tmp_path, monkeypatch):
    """The pod's mounted service account, where the client reads it."""
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("service-account-token")
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(ca))
    return ca


def test_in_a_cluster_the_pods_service_account_is_used_unless_a_kubeconfig_is_named(
        service_account, tmp_path):
    found = configuration.load(None, None, POD)
    assert found.host == "https://10.100.0.1:443"
    assert found.ssl_ca_cert == str(service_account)
    assert found.api_key["BearerToken"] == "bearer service-account-token"
    # a kubeconfig named in the pod wins, as kubectl's does
    kubeconfig(tmp_path / "config", "http://127.0.0.1:1")
    named = configuration.load(None, None, {**POD, "KUBECONFIG": str(tmp_path / "config")})
    assert named.host == "http://127.0.0.1:1"


def test_a_context_without_a_kubeconfig_is_refused_in_a_cluster(service_account):
    with pytest.raises(configuration.ConfigurationError, match="--context names a kubeconfig"):
        configuration.load(None, "prod", POD)


def test_no_cluster_and_no_kubeconfig_says_where_it_looked(tmp_path):
    with pytest.raises(configuration.ConfigurationError,
                       match=rf"not in a cluster .* or {tmp_path}/.kube/config\)"):
        configuration.load(None, None, {"HOME": str(tmp_path)})


def test_connection_errors_are_retried_and_timed_out_reads_are_not(tmp_path):
    kubeconfig(tmp_path / "config", "http://127.0.0.1:1")
    retries = configuration.load(str(tmp_path / "config"), None, {}).retries
    assert (retries.total, retries.connect, retries.read) == (2, 2, 0)
