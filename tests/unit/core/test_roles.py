"""Token roles in rank order (inventory/core/roles.py)."""
import pytest

from inventory.core.roles import ROLES, allows


def test_each_role_may_do_what_the_ones_before_it_may_and_no_more():
    for rank, role in enumerate(ROLES):
        for other_rank, needed in enumerate(ROLES):
            assert allows(role, needed) is (rank >= other_rank), (role, needed)
    assert ROLES == ("reader", "writer", "admin")


def test_an_unknown_role_is_no_role():
    with pytest.raises(KeyError):
        allows("owner", "reader")
