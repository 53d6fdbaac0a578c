"""The Blueprint every resource module uses: flask-smorest's, with the
service's strict argument parser, schemas made once, answers dumped by
compiled plans, and the `Link` header that names a body's schema."""
import functools

import flask_smorest
from flask_smorest.utils import resolve_schema_instance, unpack_tuple_response
from werkzeug.datastructures import Headers
from werkzeug.wrappers import Response

from inventory.api.dumping import compiled_dump
from inventory.api.parser import StrictParser
from inventory.schema_urls import describing_link


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = StrictParser()

    def arguments(self, schema, *args, **kwargs):
        """flask-smorest's `arguments`, with one schema instance made here:
        given a class, webargs would make a new instance for every request."""
        return super().arguments(resolve_schema_instance(schema), *args, **kwargs)

    def response(self, status_code, schema=None, **kwargs):
        """flask-smorest's `response`, dumping with the schema's compiled plan
        (inventory.api.dumping); the document still reads the schema itself.
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
