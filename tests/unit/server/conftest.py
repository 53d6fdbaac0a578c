"""Fixtures of the serving layer's tests that reach its private parts,
each saying why (tests/unit/test_private_reach.py holds them to it)."""
import pytest


@pytest.fixture
def stream_connection():
    """`connection(socket, keepalive)`: the worker's view of one client's
    socket while it streams. Private: `inventory.server.worker._Connection`
    is made by gunicorn's request handling, inside a served worker; a socket
    pair tests its look at the client alone, without serving."""
    from inventory.server.worker import _Connection

    return _Connection
