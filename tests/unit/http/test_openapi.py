"""inventory.http.openapi, on its own: flask-smorest's document completed
from the operations' declarations (`complete`), never from paths or
blueprint names: each operation's error statuses (what every request may
meet, what a token and a body add, what it declares), its success headers,
its conditional and idempotency headers, who may call it, its path
parameters from their PathKeys; the shared components. The served document
as a whole: tests/unit/http/test_operations.py."""
import copy

import pytest

from inventory.http.blueprint import PATH_KEYS
from inventory.http.openapi import ERROR_MEANINGS, SERVER_LAYER, complete
from inventory.http.operations import Operation

JSON = {"application/json": {"schema": {"$ref": "#/components/schemas/Thing"}}}


def smorest_document():
    """What flask-smorest writes for three operations, its own error entries included."""
    return {
        "openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "paths": {
            "/things/{cluster}": {
                "parameters": [{"name": "cluster", "in": "path", "required": True,
                                "schema": {"type": "string"}}],
                "get": {"operationId": "getThing", "description": "Read it.",
                        "responses": {"200": {"content": JSON},
                                      "default": {"description": "smorest's"}}},
                "patch": {"operationId": "updateThing", "requestBody": {"content": JSON},
                          "responses": {"200": {"content": JSON},
                                        "422": {"description": "smorest's"}}}},
            "/open": {"get": {"operationId": "getOpen",
                              "responses": {"200": {"content": {"text/plain": {}}}}}},
            "/things": {"post": {"operationId": "createThing", "requestBody": {"content": JSON},
                                 "responses": {"201": {"content": JSON}}}}},
        "components": {"schemas": {"Thing": {"type": "object"}, "PaginationMetadata": {}}}}


DECLARED = [
    Operation("getThing", role="reader", if_none_match=True, etag=True, errors=(404,)),
    Operation("updateThing", role="writer", if_match=True, etag=True, errors=(412,),
              max_body=2048),
    Operation("getOpen", role=None),
    Operation("createThing", role="writer", idempotency_key=True, secret=True,
              links={"getIt": ("getThing", {"cluster": "$response.body#/name"})}),
]


@pytest.fixture
def document(app):
    """The completed document of smorest_document (the app: its PathKeys declared)."""
    return complete(smorest_document(), DECLARED, "Browsers of https://ui.example may call.")


def operation(document, path, method):
    return document["paths"][path][method]


def problems(entry):
    return sorted(int(status) for status in entry["responses"] if not status.startswith("2")
                  and status != "304")


def test_the_document_given_is_not_changed():
    given = smorest_document()
    kept = copy.deepcopy(given)
    complete(given, DECLARED)
    assert given == kept


def test_an_operations_errors_are_what_every_request_meets_its_token_body_and_declaration(
        document):
    every = {500, *SERVER_LAYER}
    token = {401, 403, 429, 503}
    body = {400, 413, 415, 422}
    assert problems(operation(document, "/open", "get")) == sorted(every)
    assert problems(operation(document, "/things/{cluster}", "get")) == sorted(
        every | token | {404})
    assert problems(operation(document, "/things/{cluster}", "patch")) == sorted(
        every | token | body | {412})
    entry = operation(document, "/things/{cluster}", "patch")
    assert entry["responses"]["412"] == {"$ref": "#/components/responses/Problem412"}
    assert "default" not in operation(document, "/things/{cluster}", "get")["responses"]


def test_who_may_call_is_said_and_an_open_operation_needs_no_security(document):
    read = operation(document, "/things/{cluster}", "get")
    assert read["description"] == "Read it.\n\nNeeds a token with the `reader` role or above."
    assert "security" not in read
    opened = operation(document, "/open", "get")
    assert opened["description"] == "Needs no token." and opened["security"] == []
    update = operation(document, "/things/{cluster}", "patch")
    assert update["description"].startswith("The body is at most 2 KiB (else 413).")


def header_names(response):
    return set(response["headers"])


def test_success_headers_follow_the_declaration(document):
    read = operation(document, "/things/{cluster}", "get")["responses"]["200"]
    assert header_names(read) == {"X-Request-ID", "Link", "ETag", "RateLimit-Policy",
                                  "RateLimit", "Access-Control-Allow-Origin"}
    created = operation(document, "/things", "post")["responses"]["201"]
    assert {"Location", "Idempotent-Replayed", "Cache-Control"} <= header_names(created)
    assert "ETag" not in header_names(created)
    opened = operation(document, "/open", "get")["responses"]["200"]
    assert header_names(opened) == {"X-Request-ID", "Access-Control-Allow-Origin"}


def test_conditional_and_idempotency_headers_are_parameters_where_declared(document):
    read = operation(document, "/things/{cluster}", "get")
    assert [p["name"] for p in read["parameters"]] == ["If-None-Match"]
    assert set(read["responses"]["304"]["headers"]) >= {"ETag", "X-Request-ID"}
    update = operation(document, "/things/{cluster}", "patch")
    assert [p["name"] for p in update["parameters"]] == ["If-Match"]
    assert "304" not in update["responses"]
    assert [p["name"] for p in operation(document, "/things", "post")["parameters"]] == [
        "Idempotency-Key"]
    assert "parameters" not in operation(document, "/open", "get")


def test_links_go_with_the_success_answer(document):
    created = operation(document, "/things", "post")["responses"]["201"]
    assert created["links"] == {"getIt": {"operationId": "getThing",
                                          "parameters": {"cluster": "$response.body#/name"}}}


def test_a_path_parameter_is_described_by_its_path_key(document):
    key = PATH_KEYS["cluster"]
    parameter = document["paths"]["/things/{cluster}"]["parameters"][0]
    assert parameter["description"] == key.description
    assert parameter["schema"]["maxLength"] == key.max_length
    assert parameter["schema"]["pattern"] == "|".join(
        f"(?:{pattern.pattern})" for pattern in key.patterns)


def test_the_shared_components(document):
    components = document["components"]
    assert set(components["responses"]) == {f"Problem{status}" for status in ERROR_MEANINGS}
    throttled = components["responses"]["Problem429"]
    assert {"Retry-After", "RateLimit-Policy", "RateLimit"} <= set(throttled["headers"])
    assert throttled["description"].startswith("Too Many Requests: ")
    assert "WWW-Authenticate" in components["responses"]["Problem401"]["headers"]
    assert "RateLimit" not in components["responses"]["Problem500"]["headers"]
    assert "PaginationMetadata" not in components["schemas"]
    assert components["schemas"]["Thing"]["title"] == "Thing"
    assert document["security"] == [{"bearerAuth": []}]
    assert document["info"]["description"].endswith("Browsers of https://ui.example may call.")


def test_csv_rows_are_described_once_a_list_answers_csv(app):
    plain = complete(smorest_document(), DECLARED)
    assert "CsvRows" not in plain["components"]["schemas"]
    declared = [*DECLARED[:2], Operation("getOpen", role=None, csv=True), DECLARED[3]]
    document = complete(smorest_document(), declared)
    assert "CsvRows" in document["components"]["schemas"]
    assert operation(document, "/open", "get")["responses"]["200"]["content"]["text/csv"] == {
        "schema": {"$ref": "#/components/schemas/CsvRows"}}
