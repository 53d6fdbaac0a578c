"""Fixtures of the HTTP layer's tests that reach its private parts, each
saying why (tests/unit/test_private_reach.py holds them to it)."""
import pytest


@pytest.fixture
def fingerprint_parse():
    """`parse(body)`: the value the idempotency fingerprint is made of.
    Private: `inventory.http.idempotency._parsed` is one step of the
    fingerprint, inside a request; through HTTP a test sees only whether a
    retry matched, not the value for every body shape."""
    from inventory.http.idempotency import _parsed

    return _parsed


@pytest.fixture
def coroutine_answers():
    """`answers(application)`: the answers `Application.ensure_sync` keeps,
    {function: whether a coroutine}. Private: their number is the bound the
    test holds; no public call counts them."""
    return lambda application: application._coroutine_functions
