"""What each operation does, declared on its view method, and read by
everything that enforces or documents it.

    @blp.route("/<platform>")
    class KubePlatform(MethodView):
        @blp.arguments(KubePlatformPatchSchema)
        @blp.response(200, KubePlatformSchema)
        @operation("updateKubePlatform", role="writer", if_match=True, etag=True,
                   errors=(404, 409, 412, 422))
        def patch(self, changes, platform):
            '''Change some fields of a platform ...'''

The design, and why: docs/design/operations.md"""
from copy import deepcopy
from dataclasses import dataclass, field

from flask import current_app, request
from flask_smorest.utils import deepupdate

from inventory.core.roles import ROLES

# Routes that are not operations of the API (the document itself, the docs
# page and its files): open to anyone, and not in the document.
NOT_OPERATIONS = frozenset({"static", "api-docs.openapi_json", "api-docs.openapi_swagger_ui",
                            "docs-assets.static", "ui.static"})


@dataclass(frozen=True)
class Operation:
    operation_id: str
    role: str | None  # the least role that may call it; None: open, no token
    errors: tuple = ()  # error statuses it answers, beyond those of its role and body
    idempotency_key: bool = False  # honours Idempotency-Key (replays the first answer)
    if_match: bool = False  # honours If-Match (412 when the record changed)
    if_none_match: bool = False  # honours If-None-Match (304)
    etag: bool = False  # its success answer carries the record's ETag
    secret: bool = False  # its answer holds a secret: Cache-Control: no-store
    # OpenAPI links from its success answer: name -> (operationId, {parameter:
    # expression}) or (operationId, {parameter: expression}, {body field: expression})
    links: dict = field(default_factory=dict)
    stream: str | None = None  # a media type it streams instead, when Accept asks for it
    csv: bool = False  # a list that answers its whole match as text/csv (inventory.http.csv_export)
    # A page of the console (inventory/ui): HTML for people, not an operation
    # of the API's document; its caller is signed in with a session.
    page: bool = False
    # An API operation a console page calls with its session instead of a
    # bearer token (a GET: it changes nothing, so it needs no form token).
    session: bool = False

    def __post_init__(self):
        if self.role is not None and self.role not in ROLES:
            raise ValueError(f"{self.operation_id}: unknown role {self.role!r}")
        if self.session and self.page:
            raise ValueError(f"{self.operation_id}: a page takes a session already")

    @property
    def signed_in(self):
        """Whether a console session may call it (inventory.http.auth)."""
        return self.page or self.session


def operation(operation_id, *, role, **declared):
    """Declare what the decorated view method does (see Operation). Place it
    innermost, right above the method: flask-smorest's decorators keep it."""
    declaration = Operation(operation_id, role, **declared)

    def decorator(method):
        method.operation = declaration
        # flask-smorest's own channel for what a decorator adds to the document
        method._apidoc = deepupdate(deepcopy(getattr(method, "_apidoc", {})),
                                    {"manual_doc": {"operationId": operation_id}})
        return method
    return decorator


def collect(app):
    """{(endpoint, METHOD): Operation} of every route; an undeclared route is
    an error at start, so a new resource cannot silently be open or undocumented."""
    operations = {}
    for rule in app.url_map.iter_rules():
        if rule.endpoint in NOT_OPERATIONS:
            continue
        view_class = getattr(app.view_functions[rule.endpoint], "view_class", None)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            declared = getattr(getattr(view_class, method.lower(), None), "operation", None)
            if declared is None:
                raise RuntimeError(f"{method} {rule.rule} ({rule.endpoint}) has no @operation "
                                   "declaration (inventory.http.operations)")
            operations[(rule.endpoint, method)] = declared
    return operations


def current_operation(current=None):
    """The declaration of the operation this request calls (`current`, or
    the request of this context), or None (no such route or method, or a
    route that is not an operation)."""
    if current is None:
        current = request._get_current_object()
    try:
        return current.inventory_operation  # looked up once per request
    except AttributeError:
        pass
    declared = None
    if current.url_rule is not None:
        method = "GET" if current.method == "HEAD" else current.method
        declared = current_app.extensions["inventory.http.operations"].get(
            (current.endpoint, method))
    current.inventory_operation = declared
    return declared
