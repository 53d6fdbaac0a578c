"""Fixtures of the agent's tests that reach its private parts, each saying
why (tests/unit/test_private_reach.py holds them to it)."""
import pytest


@pytest.fixture
def pauses(monkeypatch):
    """The pauses the agent would have made between its tries, recorded
    (in seconds) instead of waited. Private: `inventory.agent.posting._pause`
    is where the agent sleeps; no flag shortens it, and a test waiting out
    its back-off would take minutes."""
    from inventory.agent import posting

    waited = []
    monkeypatch.setattr(posting, "_pause", waited.append)
    return waited


@pytest.fixture
def cluster_configuration():
    """`configuration(environment)`: the Kubernetes client's configuration
    the agent makes from an environment, with no flags. Private:
    `inventory.agent.cluster._configuration` reads the in-cluster files a pod
    has mounted; run whole, the agent would go on to reach a cluster at the
    pod's address, which a test has not."""
    from inventory.agent import cluster

    return lambda environment: cluster._configuration(None, None, environment)
