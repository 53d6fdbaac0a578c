"""The libraries' private internals the service relies on, each used in one
named module and pinned there: these fail with a plain message (what moved,
what to do) when an upgrade moves them, before anything subtler breaks."""
import pytest

from inventory.embedded import mongomock_internals

# marshmallow's and gunicorn's: tests/unit/http/test_marshmallow_internals.py
# and tests/unit/server/test_gunicorn_internals.py


@pytest.mark.parametrize("module", [mongomock_internals], ids=lambda module: module.__name__)
def test_the_internals_are_where_they_were_written_for(module):
    module.check()


def test_a_moved_internal_is_named_with_what_to_do(monkeypatch):
    monkeypatch.setattr(mongomock_internals, "WRITTEN_FOR", {"mongomock-ng": "0.0.1"})
    with pytest.raises(AssertionError, match=r"mongomock-ng 7\.11\.1 is installed\. "
                                             r"inventory/embedded/mongomock_internals\.py was "
                                             r"written for mongomock-ng==0\.0\.1: re-read"):
        mongomock_internals.check()
