"""Stored documents out of the cyclic garbage collector's reach.

A full collection walks every object the collector tracks, and CPython
tracks every list and every dict that holds a dict or a list, for as long
as it lives: each cluster written since the start (a dict of dicts) was
walked in each full collection, which grew with the writes since the start
to hundreds of ms of the event loop under an agent's rescans (issue 43;
bench/collector.txt). The start's documents are frozen (`gc.freeze`); the
journal hands each document it commits to `untrack`, so that what was
written since is not walked either.

Why this is safe: the collector frees only objects whose every reference
comes from other tracked objects it is collecting. A reference from an
untracked container counts as one from outside, so nothing an untracked
document holds is ever freed early; and untracked objects are still freed
by their reference counts, as everything a document holds is. What the
collector cannot do for an untracked object is find a cycle through it, and
a stored document is a tree of dicts and lists holding scalars: it makes
none. A dict changed in place later tracks itself again when it gains a
container (CPython's own rule); the store does not change stored documents
in place (`LockedCollection.uncopied`).

Alternatives measured or weighed (docs/design/envelope.md): freezing again
after writes (gc.freeze) also freezes whatever cycles of live requests and
connections exist at that moment, which are then never collected when they
die; fewer full collections (a higher threshold) make each as long;
documents stored as encoded text would change every reader of the store.
"""
import collections
import ctypes
import gc

_gc_untrack = ctypes.pythonapi.PyObject_GC_UnTrack  # public C API, stable since Python 2
_gc_untrack.argtypes = [ctypes.py_object]
_gc_untrack.restype = None
_is_tracked = gc.is_tracked
# mongomock stores what it writes itself (an upsert, a write by filter) as
# OrderedDicts; the store's own writes store dicts
_MAPS = (dict, collections.OrderedDict)


def untrack(document):
    """Untrack `document` and every dict and list in it (a tree: see the
    module's docstring). What is untracked already (CPython untracks dicts
    of scalars itself) is not walked."""
    if document.__class__ in _MAPS:
        for value in document.values():
            if _is_tracked(value):
                untrack(value)
        if _is_tracked(document):
            _gc_untrack(document)
    elif document.__class__ is list:
        for value in document:
            if _is_tracked(value):
                untrack(value)
        _gc_untrack(document)
