"""Fixtures of the commands' tests that reach private parts, each saying
why (tests/unit/test_private_reach.py holds them to it)."""
import pytest


@pytest.fixture
def current_actor():
    """`actor()`: who the feed names as the actor of the events written now,
    in this context. Private: `inventory.store.event_documents._actor` is a context
    variable read only as an event is written; a command must leave its
    caller's as it found it, which no event written shows."""
    from inventory.store import event_documents

    return event_documents._actor.get
