"""What the resource views share: path keys (checked for every route by
inventory.http.blueprint) and list pages."""
from dataclasses import dataclass, replace

from inventory.core import filtering
from inventory.core.ids import now_rfc3339
from inventory.http.auth import current_scope
from inventory.http.continuation import tokens
from inventory.http.csv_export import csv_response, wants_csv
from inventory.store.pages import PageRequest
from schemas.common import DEFAULT_LIMIT


@dataclass(frozen=True)
class PageTokens:
    """The `continue` tokens of one list as one caller asks for it: each
    bound to the list (with the caller's scope), the filter and the order
    (canonical `order_by` text), so that a token is good for nothing else."""

    list_key: str
    filter_text: str | None
    order: str = ""
    now: str | None = None  # what the filter's relative times are back from, carried on

    def bound(self, token):
        """(the bound `token` carries, the instant its filter's relative times
        were resolved against); a 422 if it is not one of these pages'."""
        return tokens().decode(token, self.list_key, self.filter_text, self.order)

    def envelope(self, page):
        """The list envelope of `page`, with the token of the page after it."""
        next_token = tokens().encode(self.list_key, self.filter_text, page.next_after,
                                     self.order, self.now) if page.next_after else ""
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
    after, now = pages.bound(token) if token else (None, None)
    if tree is not None and filtering.has_relative_time(tree):
        # resolved once, for the first page; the next pages carry the instant
        pages = replace(pages, now=now or now_rfc3339())
    return PageRequest(limit, tree, after, scope, ordering, backwards, pages.now,
                       answered=True), pages


def list_page(list_key, args, fetch, orderings, columns=None, filename=None):
    """The list envelope of the page `fetch(PageRequest) -> Page` answers
    for the query `args` (see page_request); or, when `format` or Accept
    asks for CSV, the whole match from `continue` on as `filename`, in
    `columns` (inventory.http.csv_export)."""
    request, pages = page_request(list_key, args, orderings)
    if columns is not None and wants_csv(args):
        return csv_response(fetch, request, columns, filename, args.get("filter"))
    return pages.envelope(fetch(request))
