"""What the resource views share: path keys (checked for every route by
inventory.api.blueprint) and list pages."""
import re
from dataclasses import dataclass

from inventory import filtering
from inventory.api.errors import RequestError
from inventory.auth import current_scope
from inventory.ids import (
    CLUSTER_ID_LENGTH,
    CLUSTER_ID_RE,
    EVENT_ID_LENGTH,
    EVENT_ID_RE,
    ORG_ID_LENGTH,
    ORG_ID_RE,
    SCAN_ID_LENGTH,
    SCAN_ID_RE,
    SLUG_LENGTH,
    SLUG_RE,
    TOKEN_ID_LENGTH,
    TOKEN_ID_RE,
)
from inventory.paging import tokens
from inventory.store.pages import PageRequest
from schemas.common import DEFAULT_LIMIT


@dataclass(frozen=True)
class PathKey:
    """What a path parameter may be: the check views make and the document shows."""

    description: str
    what: str  # for the 422's message: "Must be {what}."
    patterns: tuple
    max_length: int  # the longest value any of the patterns matches, for the document

    def check(self, name, value):
        if not any(pattern.match(value) for pattern in self.patterns):
            raise RequestError(422, f"path.{name}", f"Must be {self.what}.", value)
        return value


PATH_KEYS = {
    "org": PathKey("The organization's id.",
                   "an organization id (org_ followed by a UUID)", (ORG_ID_RE,), ORG_ID_LENGTH),
    "platform": PathKey("The platform's name (slug).",
                        "a platform name (an RFC 1123 DNS label)", (SLUG_RE,), SLUG_LENGTH),
    "cluster": PathKey("The cluster's name (slug) or id (`k8scl_` + UUID).",
                       "a cluster name (an RFC 1123 DNS label) or id (k8scl_ followed by a UUID)",
                       (SLUG_RE, CLUSTER_ID_RE), max(SLUG_LENGTH, CLUSTER_ID_LENGTH)),
    "scan": PathKey("The scan's id.", "a scan id (k8scs_ followed by a UUID)", (SCAN_ID_RE,),
                    SCAN_ID_LENGTH),
    # /tokens/{id}: a token's id, never its secret (a parameter named `token` reads as a
    # credential in the URL to linters and proxies alike)
    "id": PathKey("The token's id (`tok_` + UUID; never its secret).",
                  "a token id (tok_ followed by a UUID)", (TOKEN_ID_RE,), TOKEN_ID_LENGTH),
    "event": PathKey("The event's id.", "an event id (evt_ followed by 16 hex digits)",
                     (EVENT_ID_RE,), EVENT_ID_LENGTH),
    "name": PathKey("A schema's name, as in a body's `$schema`.", "a schema name",
                    (re.compile(r"^[A-Za-z0-9]{1,64}$"),), 64),
}


@dataclass(frozen=True)
class PageTokens:
    """The `continue` tokens of one list as one caller asks for it: each
    bound to the list (with the caller's scope), the filter and the order
    (canonical `order_by` text), so that a token is good for nothing else."""

    list_key: str
    filter_text: str | None
    order: str = ""

    def bound(self, token):
        """The bound `token` carries; a 422 if it is not one of these pages'."""
        return tokens().decode(token, self.list_key, self.filter_text, self.order)

    def envelope(self, page):
        """The list envelope of `page`, with the token of the page after it."""
        next_token = tokens().encode(self.list_key, self.filter_text, page.next_after,
                                     self.order) if page.next_after else ""
        return {"results": page.records, "pagination": {"continue_": next_token}}


def page_request(list_key, args, orderings=None):
    """(the PageRequest, the PageTokens) of a list's query `args`: `filter`,
    `order_by` (among `orderings`, the list's declared ones), `limit` and
    `continue` (the bound), in the caller's organization scope.
    `list_key` names the list (`kubeclusters/k8scl_.../scans`)."""
    limit = args.get("limit") or DEFAULT_LIMIT  # 0 means the default, never "no limit"
    filter_text = args.get("filter") or None
    tree = filtering.parse(filter_text) if filter_text else None
    order_text = args.get("order_by") or None
    ordering, backwards = orderings.resolve(order_text) if order_text else (None, False)
    scope = current_scope()
    pages = PageTokens(f"{list_key}@{scope or '*'}", filter_text,
                       "" if ordering is None else
                       (ordering.reversed() if backwards else ordering).text)
    token = args.get("continue_")
    return PageRequest(limit, tree, pages.bound(token) if token else None, scope, ordering,
                       backwards), pages


def list_page(list_key, args, fetch, orderings):
    """The list envelope of the page `fetch(PageRequest) -> Page` answers
    for the query `args` (see page_request)."""
    request, pages = page_request(list_key, args, orderings)
    return pages.envelope(fetch(request))
