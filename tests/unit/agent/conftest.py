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


