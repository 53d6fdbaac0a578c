"""The journal's threads under gevent: the unpatched OS primitives they
run on (`original`), and a blocking call made so that only the calling
greenlet waits (`blocking`, in the hub's thread pool). Without gevent,
each is the plain thing."""
import importlib
import sys


def original(module, name):
    """The unpatched `module.name` when gevent has patched it, else itself."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched(module):
        return monkey.get_original(module, name)
    return getattr(importlib.import_module(module), name)


def blocking(function, *args):
    """Call `function`; under gevent, in the hub's thread pool, so that only
    the calling greenlet waits."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched("threading"):
        import gevent
        return gevent.get_hub().threadpool.apply(function, args)
    return function(*args)
