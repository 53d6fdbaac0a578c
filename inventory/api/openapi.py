"""Completes flask-smorest's OpenAPI document so that it tells the truth.

flask-smorest documents what the decorators say: bodies, arguments, the
success status. What the service adds around the views (authentication,
conditional requests, idempotency keys, the problem+json error body of every
failure, the headers every answer carries) is added here, once, by rules
that mirror the code that implements them.
"""
import copy
from http import HTTPStatus

from inventory.api.idempotency import HEADER as IDEMPOTENCY_HEADER
from inventory.api.idempotency import RESOURCE_BLUEPRINTS
from inventory.ids import CLUSTER_ID_RE, ORG_ID_RE, SCAN_ID_RE, SLUG_RE, TOKEN_ID_RE

PROBLEM = "application/problem+json"
OPEN_PATHS = ("/healthz", "/readyz", "/schemas/")
ERROR_REF = {"$ref": "#/components/schemas/Error"}

PATH_PARAMETERS = {
    "org": ("The organization's id.", ORG_ID_RE.pattern),
    "platform": ("The platform's name (slug).", SLUG_RE.pattern),
    "cluster": ("The cluster's name (slug) or id (`k8scl_` + UUID).",
                f"{SLUG_RE.pattern}|{CLUSTER_ID_RE.pattern}"),
    "scan": ("The scan's id.", SCAN_ID_RE.pattern),
    "token": ("The token's id.", TOKEN_ID_RE.pattern),
    "name": ("A schema's name, as in a body's `$schema`.", None),
}

HEADERS = {
    "X-Request-ID": {"description": "Identifies this request; the error body's `instance` "
                     "names it too.", "schema": {"type": "string"}},
    "Link": {"description": '`<{$schema URL}>; rel="describedBy"`.', "schema": {"type": "string"}},
    "ETag": {"description": "The record's version, for If-Match and If-None-Match.",
             "schema": {"type": "string"}},
    "Location": {"description": "URL of the created record.",
                 "schema": {"type": "string", "format": "uri"}},
    "WWW-Authenticate": {"description": "`Bearer` challenge.", "schema": {"type": "string"}},
    "Allow": {"description": "The methods the path allows.", "schema": {"type": "string"}},
    "Retry-After": {"description": "Seconds to wait before retrying.",
                    "schema": {"type": "string"}},
    "Idempotent-Replayed": {"description": "`true` when this is the stored answer to an "
                            "earlier request with the same Idempotency-Key.",
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
        "schema": {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[!-~]+$"},
        "description": "Retry safely: the same key with the same request within 24 hours "
                       "answers the first answer again instead of creating twice; the same key "
                       "with another request is a 422. Keys belong to the calling token."},
}

ERROR_MEANINGS = {
    400: "The body is not valid JSON (also: duplicate keys, NaN, invalid UTF-8, nesting over 32).",
    401: "No valid bearer token.",
    403: "The token's role or organization scope does not allow this.",
    404: "No such record (or not visible to this token), or no such route.",
    405: "The path does not allow this method; `Allow` lists those it does.",
    409: "A record with this key exists, the record still has children (pass force=true), "
         "or a request with this Idempotency-Key is still running.",
    412: "If-Match names no current ETag of the record: it changed meanwhile.",
    413: "The body is over 1 MiB.",
    415: "The body is not JSON.",
    422: "A parameter, header or body field is not valid; `errors` has one entry per problem.",
    500: "The service failed; the answer reveals nothing of its code.",
    503: "The database cannot be reached; retry after `Retry-After` seconds.",
}


# Stable operation ids: the names generated clients give their functions.
OPERATION_IDS = {
    ("get", "/organizations"): "listOrganizations",
    ("post", "/organizations"): "createOrganization",
    ("get", "/organizations/{org}"): "getOrganization",
    ("patch", "/organizations/{org}"): "updateOrganization",
    ("delete", "/organizations/{org}"): "deleteOrganization",
    ("get", "/kubeplatforms"): "listKubePlatforms",
    ("post", "/kubeplatforms"): "createKubePlatform",
    ("get", "/kubeplatforms/{platform}"): "getKubePlatform",
    ("patch", "/kubeplatforms/{platform}"): "updateKubePlatform",
    ("delete", "/kubeplatforms/{platform}"): "deleteKubePlatform",
    ("get", "/kubeclusters"): "listKubeClusters",
    ("post", "/kubeclusters"): "createKubeCluster",
    ("get", "/kubeclusters/{cluster}"): "getKubeCluster",
    ("patch", "/kubeclusters/{cluster}"): "updateKubeCluster",
    ("delete", "/kubeclusters/{cluster}"): "deleteKubeCluster",
    ("get", "/kubeclusters/{cluster}/scans"): "listKubeClusterScans",
    ("post", "/kubeclusters/{cluster}/scans"): "recordKubeClusterScan",
    ("get", "/kubeclusters/{cluster}/scans/{scan}"): "getKubeClusterScan",
    ("get", "/tokens"): "listTokens",
    ("post", "/tokens"): "createToken",
    ("get", "/tokens/{token}"): "getToken",
    ("delete", "/tokens/{token}"): "revokeToken",
    ("get", "/healthz"): "getHealth",
    ("get", "/readyz"): "getReadiness",
    ("get", "/schemas/{name}.json"): "getJsonSchema",
}


def _problem(status):
    headers = {"X-Request-ID": {"$ref": "#/components/headers/X-Request-ID"},
               "Link": {"$ref": "#/components/headers/Link"}}
    extra = {401: "WWW-Authenticate", 405: "Allow", 503: "Retry-After"}.get(status)
    if extra:
        headers[extra] = {"$ref": f"#/components/headers/{extra}"}
    return {"description": f"{HTTPStatus(status).phrase}: {ERROR_MEANINGS[status]}",
            "headers": headers, "content": {PROBLEM: {"schema": ERROR_REF}}}


def _header_refs(*names):
    return {name: {"$ref": f"#/components/headers/{name}"} for name in names}


def _error_statuses(path, method, operation, blueprint):
    protected = not path.startswith(OPEN_PATHS)
    has_body = "requestBody" in operation
    item = "{" in path.rsplit("/", 1)[-1] or path.endswith("/scans")
    statuses = {500}
    if protected:
        statuses |= {401, 403, 503}
    if path == "/readyz":
        statuses.add(503)
    if has_body:
        statuses |= {400, 413, 415}
    if has_body or operation.get("parameters") or "{" in path:
        statuses.add(422)
    if item:
        statuses.add(404)
    if method == "post" or (method == "delete" and blueprint in ("organizations", "kubeplatforms")):
        statuses.add(409)
    if method in ("patch", "delete") and blueprint in ("organizations", "kubeplatforms", "kubeclusters"):
        statuses.add(412)
    return statuses


def _complete_operation(path, method, operation):
    blueprint = (operation.get("tags") or [""])[0]
    operation["operationId"] = OPERATION_IDS[(method, path)]
    responses = operation["responses"]
    for key in [k for k in responses if not k.startswith("2")]:
        del responses[key]  # flask-smorest's own error entries
    item_path = "{" in path.rsplit("/", 1)[-1]
    for status, response in responses.items():
        names = ["X-Request-ID"]
        if "content" in response:
            names.append("Link")
        if status == "201":
            names += ["Location", "ETag"]
            if method == "post" and blueprint in RESOURCE_BLUEPRINTS:
                names.append("Idempotent-Replayed")
        elif status == "200" and item_path and blueprint != "meta" and blueprint != "tokens":
            names.append("ETag")
        response["headers"] = _header_refs(*names)
    parameters = operation.setdefault("parameters", [])
    if method == "get" and item_path and blueprint not in ("meta", "tokens"):
        parameters.append(REQUEST_HEADERS["If-None-Match"])
        responses["304"] = {"description": "Not Modified: the record is at an ETag of "
                            "If-None-Match.", "headers": _header_refs("ETag", "X-Request-ID")}
    if method in ("patch", "delete") and blueprint in ("organizations", "kubeplatforms",
                                                       "kubeclusters"):
        parameters.append(REQUEST_HEADERS["If-Match"])
    if method == "post" and blueprint in RESOURCE_BLUEPRINTS:
        parameters.append(REQUEST_HEADERS[IDEMPOTENCY_HEADER])
    if not parameters:
        del operation["parameters"]
    for status in sorted(_error_statuses(path, method, operation, blueprint)):
        responses[str(status)] = {"$ref": f"#/components/responses/Problem{status}"}
    responses["default"] = {"$ref": "#/components/responses/Problem500"}
    if path.startswith(OPEN_PATHS):
        operation["security"] = []


def _describe_path_parameters(path_item):
    for parameter in path_item.get("parameters", []):
        description, pattern = PATH_PARAMETERS.get(parameter["name"], (None, None))
        if description:
            parameter["description"] = description
        if pattern:  # one anchored alternative per form the key may take
            parameter["schema"] = {"type": "string",
                                   "pattern": "|".join(f"(?:{p})" for p in pattern.split("|"))}


def complete(document):
    """A completed copy of flask-smorest's `document`."""
    document = copy.deepcopy(document)
    components = document.setdefault("components", {})
    components["responses"] = {f"Problem{status}": _problem(status) for status in ERROR_MEANINGS}
    components["headers"] = HEADERS
    components["securitySchemes"] = {"bearerAuth": {
        "type": "http", "scheme": "bearer",
        "description": "An API token: `Authorization: Bearer <token>`."}}
    document["security"] = [{"bearerAuth": []}]
    components["schemas"].pop("PaginationMetadata", None)  # flask-smorest's; unused here
    document["info"]["description"] = (
        "An inventory of Kubernetes infrastructure for customers: organizations, their "
        "platforms, the clusters those provision, and the clusters' scans. Lists page with "
        "`limit` and `continue` and filter with `filter`; every failure answers "
        "`application/problem+json`.")
    for path, path_item in document["paths"].items():
        _describe_path_parameters(path_item)
        for method, operation in path_item.items():
            if method in ("get", "post", "patch", "put", "delete"):
                _complete_operation(path, method, operation)
    return document
