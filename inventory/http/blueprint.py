"""The Blueprint every resource module uses: flask-smorest's, with path
keys checked before any view runs, the service's strict argument parser,
schemas made once, answers dumped by compiled plans, and the `Link` header
that names a body's schema."""
import functools
import re

import flask_smorest
from flask import request
from flask_smorest.utils import resolve_schema_instance, unpack_tuple_response
from werkzeug.datastructures import Headers
from werkzeug.exceptions import MethodNotAllowed
from werkzeug.wrappers import Response

from inventory.http import actions
from inventory.http.dumping import compiled_dump
from inventory.http.errors import RequestError
from inventory.http.parser import StrictParser
from inventory.http.schema_urls import describing_link

_RULE_ARGUMENT_RE = re.compile(r"<(?:[^:<>]+:)?([^<>]+)>")


def path_parameters(rule):
    """The names of the parameters in a route's rule (`/<cluster>/scans`)."""
    return _RULE_ARGUMENT_RE.findall(rule)


# Every path parameter's PathKey (inventory.core.spec), by name, as the
# blueprints declare them; the OpenAPI document describes parameters from it.
PATH_KEYS = {}


def _checked(path):
    """The path parameters of a request, each checked by its PathKey (a 422
    at `path.<name>` for a value it does not allow)."""
    allowed = actions.methods_of(request.path)  # an action's URL, seen by its record's route
    if allowed is not None and request.method not in allowed:
        raise MethodNotAllowed(valid_methods=sorted(allowed))
    for name, value in path.items():
        key = PATH_KEYS[name]
        if not key.matches(value):
            raise RequestError(422, f"path.{name}", f"Must be {key.what}.", value)
    return path


class _PathKeysChecked:
    """Mixed into each view class with path parameters: they reach the
    view's methods only once checked (after authentication, as the views
    did by hand)."""

    def dispatch_request(self, **path):
        return super().dispatch_request(**_checked(path))


def _checking_path_keys(view):
    if isinstance(view, type):  # a MethodView: the same class, with the check
        return type(view.__name__, (_PathKeysChecked, view),
                    {"__module__": view.__module__, "__qualname__": view.__qualname__,
                     "__doc__": view.__doc__})

    @functools.wraps(view)
    def checked(**path):
        return view(**_checked(path))
    return checked


class Blueprint(flask_smorest.Blueprint):
    """`path_keys`: the PathKeys of the parameters its routes use (its
    resource's and its parents')."""

    ARGUMENTS_PARSER = StrictParser()

    def __init__(self, *args, path_keys=(), **kwargs):
        super().__init__(*args, **kwargs)
        for key in path_keys:
            if PATH_KEYS.setdefault(key.name, key) != key:
                raise RuntimeError(f"two PathKeys named {key.name!r}")

    def add_url_rule(self, rule, endpoint=None, view_func=None, *args, **kwargs):
        """Every path parameter is checked by its PathKey (inventory.http.lists)
        before the view runs; a route whose parameter has none is an error
        at start, so that no view can take any value for a key."""
        unknown = [name for name in path_parameters(rule) if name not in PATH_KEYS]
        if unknown:
            raise RuntimeError(f"{rule} ({self.name}): no PathKey for {', '.join(unknown)} "
                               "(give it in the Blueprint's path_keys)")
        if view_func is not None and path_parameters(rule):
            view_func = _checking_path_keys(view_func)
        actions.declare(rule, kwargs.get("methods") or getattr(view_func, "methods", None)
                        or ("GET",))
        super().add_url_rule(rule, endpoint, view_func, *args, **kwargs)

    def arguments(self, schema, *args, **kwargs):
        """flask-smorest's `arguments`, with one schema instance made here
        (given a class, webargs would make a new instance for every
        request); marshmallow loads it."""
        schema = resolve_schema_instance(schema)
        return super().arguments(schema, *args, **kwargs)

    def response(self, status_code, schema=None, **kwargs):
        """flask-smorest's `response`, dumping with the schema's compiled plan
        (inventory.http.dumping); the document still reads the schema itself.
        A body that names its schema in `$schema` names it in `Link` too,
        set here where the answer is made (dumping changes no request state)."""
        schema_name = None
        if schema is not None:
            schema = resolve_schema_instance(schema)
            fast = compiled_dump(schema)
            if fast is not None:
                schema.dump = fast  # this instance is the decorator's own
            if not getattr(schema, "nested", True) and not schema.many:
                schema_name = getattr(schema, "SCHEMA_NAME", None)
        document = super().response(status_code, schema, **kwargs)
        if schema_name is None:
            return document
        return lambda view: document(_linking(view, schema_name))


def _linking(view, schema_name):
    """`view`, answering a body it leaves to the schema with its `Link`
    header; an answer the view makes itself (a 304, a stream) is its own."""
    @functools.wraps(view)
    def linked(*args, **kwargs):
        result, status, headers = unpack_tuple_response(view(*args, **kwargs))
        if isinstance(result, Response):
            return result if status is None and headers is None else (result, status, headers)
        headers = Headers(headers)
        headers["Link"] = describing_link(schema_name)
        return result, status, headers
    return linked
