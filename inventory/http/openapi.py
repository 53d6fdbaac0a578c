"""Completes flask-smorest's OpenAPI document from the operations' own
declarations (`inventory.http.operations`).

flask-smorest documents what its decorators say: bodies, arguments, the
success answer. What each operation declares beside them (the role it needs,
the error statuses it answers, the conditional and idempotency headers it
honours, the links from what it creates) is written into its entry here, from
the declaration, which is also what the code enforcing it reads. Nothing here
looks at paths or blueprint names.
"""
import copy
from http import HTTPStatus

from inventory.core import caps as limits
from inventory.http.blueprint import PATH_KEYS
from inventory.http.conditional import MAX_ETAG_LIST
from inventory.http.idempotency import HEADER as IDEMPOTENCY_HEADER
from inventory.http.idempotency import MAX_KEY_LENGTH as MAX_IDEMPOTENCY_KEY
from inventory.http.parser import MAX_JSON_DEPTH
from schemas.common import BodySchema

PROBLEM = "application/problem+json"
CSV = "text/csv"
CSV_DESCRIPTION = (
    f"With `format=csv` or `Accept: text/csv`: every matching record (at most "
    f"{limits.MAX_CSV_ROWS:,}; past it a 422 before the first byte), in the list's order, "
    "UTF-8, CRLF line ends, RFC 4180 quoting; a header row of the record's fields, nested "
    "ones dotted (`support.status`), one column per label key (`labels.team`), lists and "
    "other objects as JSON; null is an empty cell; a text cell starting with `=`, `+`, `-`, "
    "`@`, a tab or a carriage return starts with `'`. A broken connection (no last chunk) "
    "means the file is not whole.")
ERROR_REF = {"$ref": "#/components/schemas/Error"}
METHODS = ("get", "post", "patch", "put", "delete")

HEADERS = {
    "X-Request-ID": {"description": "Identifies this request; the error body's `instance` "
                     "names it too.", "schema": {"type": "string"}},
    "Link": {"description": '`<{$schema URL}>; rel="describedBy"`.', "schema": {"type": "string"}},
    "ETag": {"description": "The record's version, for If-Match and If-None-Match.",
             "schema": {"type": "string"}},
    "Location": {"description": "URL of the created record.",
                 "schema": {"type": "string", "format": "uri"}},
    "WWW-Authenticate": {"description": "`Bearer` challenge.", "schema": {"type": "string"}},
    "Retry-After": {"description": "Seconds to wait before retrying.",
                    "schema": {"type": "string"}},
    "Idempotent-Replayed": {"description": "`true` when this is the stored answer to an "
                            "earlier request with the same Idempotency-Key.",
                            "schema": {"type": "string"}},
    "Cache-Control": {"description": "`no-store`: the answer holds a secret.",
                      "schema": {"type": "string"}},
    # draft-ietf-httpapi-ratelimit-headers-10 (inventory.http.rate_limits)
    "RateLimit-Policy": {"description": "The caller's rate limit, "
                         "draft-ietf-httpapi-ratelimit-headers-10: `\"token\";q=1000;w=60` "
                         "(per token) or `\"address\";q=60;w=60` (per client address, "
                         "without a valid token): `q` requests per `w` seconds.",
                         "schema": {"type": "string"}},
    "RateLimit": {"description": "What is left of it: `\"token\";r=998;t=59`, `r` requests "
                  "left, `t` seconds until the window frees some.",
                  "schema": {"type": "string"}},
    # inventory.http.cors: on any answer of the app, when the request's Origin is allowed
    "Access-Control-Allow-Origin": {
        "description": "The request's `Origin`, when it is one of the deployment's "
                       "CORS_ORIGINS (see the document's description); absent otherwise.",
        "schema": {"type": "string"}},
}
# May come with any answer of the app, whatever the route declares (CORS,
# for a browser page on an allowed origin).
EVERY_ANSWER = ("Access-Control-Allow-Origin",)

# An ETag list as RFC 9110 writes it: visible ASCII, spaces and commas
ETAG_LIST = {"type": "string", "maxLength": MAX_ETAG_LIST,
             "pattern": "^[\\x21-\\x7e \\t]*$"}

REQUEST_HEADERS = {
    "If-Match": {"in": "header", "name": "If-Match", "required": False, "schema": ETAG_LIST,
                 "description": "Change or delete only if the record is still at one of these "
                                "ETags (else 412). `*` matches any."},
    "If-None-Match": {"in": "header", "name": "If-None-Match", "required": False,
                      "schema": ETAG_LIST,
                      "description": "Answer 304 with no body if the record is at one of these ETags."},
    IDEMPOTENCY_HEADER: {
        "in": "header", "name": IDEMPOTENCY_HEADER, "required": False,
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY, "pattern": "^[!-~]+$"},
        "description": "Retry safely: the same key with the same request within 24 hours "
                       "answers the first answer again instead of creating twice; the same key "
                       "with another request is a 422. Keys belong to the calling token."},
}

ERROR_MEANINGS = {
    400: "The request is malformed: a body that is not valid JSON (also: duplicate keys, NaN, "
         f"invalid UTF-8, nesting over {MAX_JSON_DEPTH}), a query string that is not UTF-8, a "
         "`Host` this deployment does not serve (ALLOWED_HOSTS), or, from the server layer, a "
         "request that is not valid HTTP/1.1.",
    408: f"The request line and headers did not arrive within {limits.HEADER_TIMEOUT:g} s, "
         f"or the body stalled for {limits.REQUEST_TIMEOUT:g} s.",
    401: "No valid bearer token.",
    403: "The token's role or organization scope does not allow this.",
    404: "No such record (or not visible to this token), or no such route.",
    409: "A record with this key exists, the record still has children (pass force=true), "
         "or a request with this Idempotency-Key is still running.",
    412: "If-Match names no current ETag of the record: it changed meanwhile.",
    410: "The resume point is older than the oldest event kept: list again and resume "
         "from the newest id.",
    413: f"The body is over {limits.MAX_BODY_BYTES / 2**20:g} MiB.",
    414: f"The request line is over {limits.REQUEST_LINE_BYTES // 1024} KiB.",
    415: "The body is not JSON.",
    422: "A parameter, header or body field is not valid; `errors` has one entry per problem.",
    431: f"A header field is over {limits.REQUEST_HEADER_FIELD_BYTES:,} bytes, or there are "
         f"more than {limits.REQUEST_HEADER_FIELDS} of them.",
    429: "Too many requests: the caller's rate limit (see `RateLimit-Policy`), or more of "
         "its requests at once than it may have in flight; retry after `Retry-After` seconds.",
    500: "The service failed; the answer reveals nothing of its code.",
    501: "A transfer coding other than chunked (`Transfer-Encoding: gzip, chunked`).",
    503: "The database cannot be reached, or the worker holds as many connections as it may; "
         "retry after `Retry-After` seconds.",
    505: "An HTTP version other than 1.0 and 1.1.",
}
# What the server layer (gunicorn, inventory.server.worker) may answer to any
# request, before the app sees it (README: Errors).
SERVER_LAYER = frozenset({400, 408, 413, 414, 431, 501, 503, 505})


def _problem(status):
    headers = {"X-Request-ID": {"$ref": "#/components/headers/X-Request-ID"},
               "Link": {"$ref": "#/components/headers/Link"}}
    extra = {401: ("WWW-Authenticate",), 503: ("Retry-After",),
             429: ("Retry-After", "RateLimit-Policy", "RateLimit")}.get(status, ())
    headers.update(_header_refs(*extra, *EVERY_ANSWER))
    if 400 <= status < 500:  # a counted request's refusal carries the rate headers too
        headers.update(_header_refs("RateLimit-Policy", "RateLimit"))
    return {"description": f"{HTTPStatus(status).phrase}: {ERROR_MEANINGS[status]}",
            "headers": headers, "content": {PROBLEM: {"schema": ERROR_REF}}}


def _header_refs(*names):
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _error_statuses(operation, declared):
    """What the operation may answer besides success: what every request
    may meet, what its token and body may cause, and what it declares."""
    statuses = {500, *SERVER_LAYER, *declared.errors}
    if declared.role is not None:  # needs a token, so rate limited (inventory.http.rate_limits)
        statuses |= {401, 403, 429, 503}
    if "requestBody" in operation:
        statuses |= {400, 413, 415, 422}
    return statuses


def _success_headers(status, response, declared):
    names = ["X-Request-ID"]
    if any(kind.endswith("json") and kind != "application/schema+json"
           for kind in response.get("content", {})):
        names.append("Link")  # every JSON body names its schema
    if status == "201":
        names.append("Location")
    if declared.etag:
        names.append("ETag")
    if status == "201" and declared.idempotency_key:
        names.append("Idempotent-Replayed")
    if declared.secret:
        names.append("Cache-Control")
    if declared.role is not None:
        names += ["RateLimit-Policy", "RateLimit"]
    return _header_refs(*names, *EVERY_ANSWER)


def _links(declared):
    """OpenAPI links: (operationId, {parameter: expression}[, {body field: expression}])."""
    links = {}
    for name, (target, parameters, *body) in declared.links.items():
        link = links[name] = {"operationId": target}
        if parameters:
            link["parameters"] = parameters
        if body:
            link["requestBody"] = body[0]
    return links


def _complete_operation(operation, declared):
    responses = operation["responses"]
    for key in [k for k in responses if not k.startswith("2")]:
        del responses[key]  # flask-smorest's own error entries
    for status, response in responses.items():
        response["headers"] = _success_headers(status, response, declared)
        if declared.links and status.startswith("2"):
            response["links"] = _links(declared)
        if declared.csv and status == "200":
            response["content"][CSV] = {"schema": {"$ref": "#/components/schemas/CsvRows"}}
        if declared.stream and status == "200":
            response["content"][declared.stream] = {"schema": {
                "type": "string", "description": "Server-Sent Events: each event's `id:` is "
                "its id, `event:` its type, `data:` the event as JSON."}}
    parameters = operation.setdefault("parameters", [])
    if declared.if_none_match:
        parameters.append(REQUEST_HEADERS["If-None-Match"])
        responses["304"] = {"description": "Not Modified: the record is at an ETag of "
                            "If-None-Match.",
                            "headers": _header_refs("ETag", "X-Request-ID", *EVERY_ANSWER)}
    if declared.if_match:
        parameters.append(REQUEST_HEADERS["If-Match"])
    if declared.idempotency_key:
        parameters.append(REQUEST_HEADERS[IDEMPOTENCY_HEADER])
    if not parameters:
        del operation["parameters"]
    for status in sorted(_error_statuses(operation, declared)):
        responses[str(status)] = {"$ref": f"#/components/responses/Problem{status}"}
    who = ("Needs no token." if declared.role is None
           else f"Needs a token with the `{declared.role}` role or above.")
    if declared.max_body is not None:
        who = f"The body is at most {declared.max_body // 1024:,} KiB (else 413). {who}"
    operation["description"] = f"{operation.get('description', '').strip()}\n\n{who}".strip()
    if declared.role is None:
        operation["security"] = []


def _describe_path_parameters(path_item):
    for parameter in path_item.get("parameters", []):
        key = PATH_KEYS.get(parameter["name"])
        if key is not None:
            parameter["description"] = key.description
            # one anchored alternative per form the key may take
            parameter["schema"] = {"type": "string", "maxLength": key.max_length,
                                   "pattern": "|".join(f"(?:{pattern.pattern})"
                                                       for pattern in key.patterns)}


def _body_schemas(base=BodySchema):
    for schema in base.__subclasses__():
        yield schema
        yield from _body_schemas(schema)


def _name_and_exemplify(schemas):
    """Each schema's `title` is its name, so that code generators name their
    classes after it; a request schema with an EXAMPLE shows it (Swagger UI's
    Try-it-out starts from it)."""
    for name, schema in schemas.items():
        schema.setdefault("title", name)
    for body in _body_schemas():
        example = getattr(body, "EXAMPLE", None)
        if example is not None and body.SCHEMA_NAME in schemas:
            schemas[body.SCHEMA_NAME]["example"] = example


def complete(document, declarations, cors=""):
    """A completed copy of flask-smorest's `document`, from `declarations`
    (the Operation of every route); `cors` says which browser origins may call."""
    by_id = {declared.operation_id: declared for declared in declarations}
    document = copy.deepcopy(document)
    components = document.setdefault("components", {})
    components["responses"] = {f"Problem{status}": _problem(status) for status in ERROR_MEANINGS}
    components["headers"] = HEADERS
    components["securitySchemes"] = {"bearerAuth": {
        "type": "http", "scheme": "bearer",
        "description": "An API token: `Authorization: Bearer <token>`."}}
    document["security"] = [{"bearerAuth": []}]
    document["servers"] = [{"url": "/", "x-internal": True, "description": (
        "This deployment, where the document is served from (local, staging or production "
        "alike): the team's own inventory, not a public API.")}]
    components["schemas"].pop("PaginationMetadata", None)  # flask-smorest's; unused here
    if any(declared.csv for declared in by_id.values()):
        components["schemas"]["CsvRows"] = {"type": "string", "description": CSV_DESCRIPTION}
    _name_and_exemplify(components["schemas"])
    document["info"]["description"] = (
        "An inventory of Kubernetes infrastructure for customers: organizations, their "
        "platforms, the clusters those provision, and the clusters' scans. Lists page with "
        "`limit` and `continue` (a filtered page may be short: follow `continue` until it is "
        "empty) and filter with `filter`. Every failure answers `application/problem+json`; "
        "a method a path does not allow is a 405 with `Allow`. Requests are rate limited per "
        "token (429 with `Retry-After`, `RateLimit` and `RateLimit-Policy`). " + cors).strip()
    for path_item in document["paths"].values():
        _describe_path_parameters(path_item)
        for method, operation in path_item.items():
            if method in METHODS:
                _complete_operation(operation, by_id[operation["operationId"]])
    return document
