"""Fixtures of the system tests that reach private parts, each saying why
(tests/unit/test_private_reach.py holds them to it)."""
import pytest


@pytest.fixture
def sliced_long_walks(monkeypatch):
    """Makes the embedded store slice every long walk as finely as it can:
    a turn between any two records, a walk long from its second entry.
    Private: the slices' sizes (inventory/embedded/lock.py) are tuned
    constants, no setting; a race wants the most turns a walk can take."""
    from inventory.embedded import lock

    monkeypatch.setattr(lock, "SLICE_SECONDS", -1.0)
    monkeypatch.setattr(lock, "CLOCK_EVERY", 1)
    monkeypatch.setattr(lock, "LONG_WALK_ENTRIES", 2)
