"""The Blueprint every resource module uses: flask-smorest's, with the
service's strict argument parser, schemas made once, and answers dumped by
compiled plans."""
import flask_smorest
from flask_smorest.utils import resolve_schema_instance

from inventory.api.dumping import compiled_dump
from inventory.api.parser import StrictParser


class Blueprint(flask_smorest.Blueprint):
    ARGUMENTS_PARSER = StrictParser()

    def arguments(self, schema, *args, **kwargs):
        """flask-smorest's `arguments`, with one schema instance made here:
        given a class, webargs would make a new instance for every request."""
        return super().arguments(resolve_schema_instance(schema), *args, **kwargs)

    def response(self, status_code, schema=None, **kwargs):
        """flask-smorest's `response`, dumping with the schema's compiled plan
        (inventory.api.dumping); the document still reads the schema itself."""
        if schema is not None:
            schema = resolve_schema_instance(schema)
            fast = compiled_dump(schema)
            if fast is not None:
                schema.dump = fast  # this instance is the decorator's own
        return super().response(status_code, schema, **kwargs)
