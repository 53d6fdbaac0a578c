"""The check the `*_internals` modules make (inventory/core/pinned_versions.py)."""
import importlib.metadata

import pytest

from inventory.core.pinned_versions import check_written_for


def test_the_installed_version_passes_and_gives_the_advice():
    installed = importlib.metadata.version("pytest")
    advice = check_written_for("m.py", {"pytest": installed}, "re-read it")
    assert advice == f"m.py was written for pytest=={installed}: re-read it"


def test_another_version_fails_saying_what_is_installed_and_what_to_do():
    installed = importlib.metadata.version("pytest")
    with pytest.raises(AssertionError) as failed:
        check_written_for("m.py", {"pytest": "0.0.1"}, "re-read it")
    assert str(failed.value) == (f"pytest {installed} is installed. "
                                 "m.py was written for pytest==0.0.1: re-read it.")
