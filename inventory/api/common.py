"""What the resource views share: path keys, the caller, list pages."""
from inventory import filtering
from inventory.auth import current_scope
from inventory.errors import Unprocessable
from inventory.ids import CLUSTER_ID_RE, ORG_ID_RE, SCAN_ID_RE, SLUG_RE, TOKEN_ID_RE
from inventory.paging import tokens
from schemas.common import DEFAULT_LIMIT


def _path_key(name, value, valid, what):
    if not valid(value):
        raise Unprocessable(f"path.{name}", f"Must be {what}.", value)
    return value


def org_key(value):
    return _path_key("org", value, ORG_ID_RE.match, "an organization id (org_ followed by a UUID)")


def platform_key(value):
    return _path_key("platform", value, SLUG_RE.match, "a platform name (an RFC 1123 DNS label)")


def cluster_key(value):
    return _path_key("cluster", value, lambda v: SLUG_RE.match(v) or CLUSTER_ID_RE.match(v),
                     "a cluster name (an RFC 1123 DNS label) or id (k8scl_ followed by a UUID)")


def scan_key(value):
    return _path_key("scan", value, SCAN_ID_RE.match, "a scan id (k8scs_ followed by a UUID)")


def token_key(value):
    return _path_key("token", value, TOKEN_ID_RE.match, "a token id (tok_ followed by a UUID)")


def list_page(list_key, args, fetch):
    """The list envelope for `fetch(tree, after, limit, scope) -> Page`.

    `list_key` names the list; the continuation token is bound to it, to the
    filter and to the caller's organization scope.
    """
    limit = args["limit"] or DEFAULT_LIMIT  # 0 means the default, never "no limit"
    filter_text = args["filter"] or None
    tree = filtering.parse(filter_text) if filter_text else None
    scope = current_scope()
    list_key = f"{list_key}@{scope or '*'}"
    token = args["continue_"]
    after = tokens().decode(token, list_key, filter_text) if token else None
    page = fetch(tree, after, limit, scope)
    next_token = tokens().encode(list_key, filter_text, page.next_after) if page.next_after else ""
    return {"results": page.records, "pagination": {"continue_": next_token}}
