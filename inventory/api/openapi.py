"""Completes flask-smorest's OpenAPI document from the operations' own
declarations (`inventory.operations`).

flask-smorest documents what its decorators say: bodies, arguments, the
success answer. What each operation declares beside them (the role it needs,
the error statuses it answers, the conditional and idempotency headers it
honours, the links from what it creates) is written into its entry here, from
the declaration, which is also what the code enforcing it reads. Nothing here
looks at paths or blueprint names.
"""
import copy
from http import HTTPStatus

from inventory.api.common import PATH_KEYS
from inventory.api.idempotency import HEADER as IDEMPOTENCY_HEADER
from inventory.api.idempotency import MAX_KEY_LENGTH as MAX_IDEMPOTENCY_KEY
from inventory.api.parser import MAX_JSON_DEPTH
from inventory.limits import MAX_BODY_BYTES

PROBLEM = "application/problem+json"
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
    # draft-ietf-httpapi-ratelimit-headers-10 (inventory.api.limits)
    "RateLimit-Policy": {"description": "The caller's rate limit, "
                         "draft-ietf-httpapi-ratelimit-headers-10: `\"token\";q=1000;w=60` "
                         "(per token) or `\"address\";q=60;w=60` (per client address, "
                         "without a valid token): `q` requests per `w` seconds.",
                         "schema": {"type": "string"}},
    "RateLimit": {"description": "What is left of it: `\"token\";r=998;t=59`, `r` requests "
                  "left, `t` seconds until the window frees some.",
                  "schema": {"type": "string"}},
}

REQUEST_HEADERS = {
    "If-Match": {"in": "header", "name": "If-Match", "required": False, "schema": {"type": "string"},
                 "description": "Change or delete only if the record is still at one of these "
                                "ETags (else 412). `*` matches any."},
    "If-None-Match": {"in": "header", "name": "If-None-Match", "required": False,
                      "schema": {"type": "string"},
                      "description": "Answer 304 with no body if the record is at one of these ETags."},
    IDEMPOTENCY_HEADER: {
        "in": "header", "name": IDEMPOTENCY_HEADER, "required": False,
        "schema": {"type": "string", "minLength": 1, "maxLength": MAX_IDEMPOTENCY_KEY, "pattern": "^[!-~]+$"},
        "description": "Retry safely: the same key with the same request within 24 hours "
                       "answers the first answer again instead of creating twice; the same key "
                       "with another request is a 422. Keys belong to the calling token."},
}

ERROR_MEANINGS = {
    400: "The body is not valid JSON (also: duplicate keys, NaN, invalid UTF-8, nesting over "
         f"{MAX_JSON_DEPTH}).",
    401: "No valid bearer token.",
    403: "The token's role or organization scope does not allow this.",
    404: "No such record (or not visible to this token), or no such route.",
    409: "A record with this key exists, the record still has children (pass force=true), "
         "or a request with this Idempotency-Key is still running.",
    412: "If-Match names no current ETag of the record: it changed meanwhile.",
    410: "The resume point is older than the oldest event kept: list again and resume "
         "from the newest id.",
    413: f"The body is over {MAX_BODY_BYTES / 2**20:g} MiB.",
    415: "The body is not JSON.",
    422: "A parameter, header or body field is not valid; `errors` has one entry per problem.",
    429: "Too many requests: the caller's rate limit (see `RateLimit-Policy`), or more of "
         "its requests at once than it may have in flight; retry after `Retry-After` seconds.",
    500: "The service failed; the answer reveals nothing of its code.",
    503: "The database cannot be reached; retry after `Retry-After` seconds.",
}


def _problem(status):
    headers = {"X-Request-ID": {"$ref": "#/components/headers/X-Request-ID"},
               "Link": {"$ref": "#/components/headers/Link"}}
    extra = {401: ("WWW-Authenticate",), 503: ("Retry-After",),
             429: ("Retry-After", "RateLimit-Policy", "RateLimit")}.get(status, ())
    headers.update(_header_refs(*extra))
    return {"description": f"{HTTPStatus(status).phrase}: {ERROR_MEANINGS[status]}",
            "headers": headers, "content": {PROBLEM: {"schema": ERROR_REF}}}


def _header_refs(*names):
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _error_statuses(operation, declared):
    """What the operation may answer besides success: what every request
    may meet, what its token and body may cause, and what it declares."""
    statuses = {500, *declared.errors}
    if declared.role is not None:  # needs a token, so rate limited (inventory.api.limits)
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
    return _header_refs(*names)


def _links(declared):
    return {name: {"operationId": target, "parameters": parameters}
            for name, (target, parameters) in declared.links.items()}


def _complete_operation(operation, declared):
    responses = operation["responses"]
    for key in [k for k in responses if not k.startswith("2")]:
        del responses[key]  # flask-smorest's own error entries
    for status, response in responses.items():
        response["headers"] = _success_headers(status, response, declared)
        if declared.links and status.startswith("2"):
            response["links"] = _links(declared)
        if declared.stream and status == "200":
            response["content"][declared.stream] = {"schema": {
                "type": "string", "description": "Server-Sent Events: each event's `id:` is "
                "its id, `event:` its type, `data:` the event as JSON."}}
    parameters = operation.setdefault("parameters", [])
    if declared.if_none_match:
        parameters.append(REQUEST_HEADERS["If-None-Match"])
        responses["304"] = {"description": "Not Modified: the record is at an ETag of "
                            "If-None-Match.", "headers": _header_refs("ETag", "X-Request-ID")}
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
    operation["description"] = f"{operation.get('description', '').strip()}\n\n{who}".strip()
    if declared.role is None:
        operation["security"] = []


def _describe_path_parameters(path_item):
    for parameter in path_item.get("parameters", []):
        key = PATH_KEYS.get(parameter["name"])
        if key is not None:
            parameter["description"] = key.description
            # one anchored alternative per form the key may take
            parameter["schema"] = {"type": "string", "pattern": "|".join(
                f"(?:{pattern.pattern})" for pattern in key.patterns)}


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
    document["servers"] = [{"url": "/", "description": "This service, where the document "
                            "is served from."}]
    components["schemas"].pop("PaginationMetadata", None)  # flask-smorest's; unused here
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
