"""The journal's threads under gevent (inventory/embedded/unpatched.py): the
unpatched primitive when gevent patched its module, else the module's own;
a blocking call made directly when threading is not patched."""
import os
import sys
import threading
import types

from inventory.embedded.unpatched import blocking, original


def test_without_gevents_patches_the_primitives_are_the_modules_own(monkeypatch):
    monkeypatch.setitem(sys.modules, "gevent.monkey", types.SimpleNamespace(
        is_module_patched=lambda module: False, get_original=None))
    assert original("os", "getpid") is os.getpid
    assert blocking(threading.get_ident) == threading.get_ident()  # this thread's own call


def test_under_gevents_patches_the_original_is_asked_of_gevent(monkeypatch):
    asked = []
    monkeypatch.setitem(sys.modules, "gevent.monkey", types.SimpleNamespace(
        is_module_patched=lambda module: module == "_thread",
        get_original=lambda module, name: asked.append((module, name)) or "the original"))
    assert original("_thread", "allocate_lock") == "the original"
    assert asked == [("_thread", "allocate_lock")]
    assert original("time", "sleep") is __import__("time").sleep  # not patched: its own
