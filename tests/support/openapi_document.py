"""The OpenAPI document as a validator of requests and answers, as a
validating proxy would check them (the README's session, the README's
answers)."""
import re

from jsonschema import Draft202012Validator, FormatChecker
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOCUMENT_URI = "urn:inventory:openapi"


class Document:
    """The OpenAPI document as a validator of requests and answers."""

    def __init__(self, document):
        self.document = document
        self.registry = Registry().with_resource(DOCUMENT_URI, Resource.from_contents(
            document, default_specification=DRAFT202012))
        self.routes = [(re.compile("^" + re.sub(r"\{[^}]+\}", "[^/]+", path) + "$"), path)
                       for path in document["paths"]]

    def operation(self, method, path):
        path = path.rstrip("/") or "/"
        template = next(t for pattern, t in self.routes if pattern.match(path))
        return self.document["paths"][template][method.lower()]

    def check(self, value, schema, what):
        validator = Draft202012Validator(
            {"$ref": f"{DOCUMENT_URI}#/components/schemas/{schema['$ref'].rsplit('/', 1)[1]}"}
            if "$ref" in schema else schema,
            registry=self.registry, format_checker=FormatChecker())
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
                  for e in validator.iter_errors(value)]
        assert errors == [], (what, errors)

    def response(self, entry, status):
        response = entry["responses"].get(str(status)) or entry["responses"]["default"]
        if "$ref" in response:
            response = self.document["components"]["responses"][response["$ref"].rsplit("/", 1)[1]]
        return response
