"""Fixtures of the agent's tests: the inventory it posts to, the
environment it runs in, and those that reach its private parts, each
saying why (tests/unit/test_private_reach.py holds them to it). Each test
module serves its own `kube` (tests/support/kube_api.py), which `env` names."""
import os

import pytest

from tests.support.agent_runs import FakeInventory
from tests.support.kube_api import kubeconfig


@pytest.fixture
def inventory():
    """The inventory the agent posts to, recording what it is sent
    (tests/support/agent_runs.py)."""
    fake = FakeInventory()
    yield fake
    fake.close()


@pytest.fixture
def env(tmp_path, kube, inventory):
    """The agent's environment: the module's `kube` in a kubeconfig, this
    test's inventory, a writer's token and the cluster `payments`."""
    return {"HOME": str(tmp_path), "KUBECONFIG": str(kubeconfig(tmp_path / "kubeconfig", kube.url)),
            "INVENTORY_URL": inventory.url, "INVENTORY_TOKEN": "inv_agent-writer-token-1234",
            "INVENTORY_CLUSTER": "payments", "PATH": os.environ.get("PATH", "")}


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
