"""A console list page reads its list as the API's list operation does:
the query parsed by the same parser and arguments schema (`filter`,
`order_by`, `limit`, `continue`, each at most once, nothing else), the
page made by the same `list_page` with the caller's scope (so its
`continue` tokens are the API's, good in either). What the API answers as
a 422 is shown beside the field it concerns."""
from dataclasses import dataclass, field
from urllib.parse import urlencode

from flask import request
from werkzeug.exceptions import HTTPException

from inventory.core.errors import BadContinuation, BadFilter, BadOrdering
from inventory.http.errors import RequestError, entries_of, error_entry, validation_entries
from inventory.http.lists import list_page, page_request
from inventory.http.parser import StrictParser

PARAMETERS = ("filter", "order_by", "limit", "continue")

_parser = StrictParser()


@dataclass
class Listing:
    """One list page as a page shows it."""

    path: str  # the page's own path, for its links
    query: dict  # the list's parameters as given (text), for the form and links
    records: list = field(default_factory=list)
    next_token: str = ""
    errors: dict = field(default_factory=dict)  # parameter ("filter", ...) -> message
    sortable: tuple = ()
    failed: bool = False  # the query was refused: no page to show

    def link(self, **changes):
        """This page's URL with some parameters changed (None drops one)."""
        query = {**self.query, **changes}
        kept = {name: value for name, value in query.items()
                if name in PARAMETERS and value not in (None, "")}
        return f"{self.path}?{urlencode(kept)}" if kept else self.path

    def next_link(self):
        return self.link(**{"continue": self.next_token}) if self.next_token else None

    def export_link(self, path):
        """`path` (the list's CSV) with this page's filter and order: its whole match."""
        kept = {name: self.query[name] for name in ("filter", "order_by") if self.query.get(name)}
        return f"{path}?{urlencode(kept)}" if kept else path

    def first_link(self):
        return self.link(**{"continue": None})

    def sort_link(self, name):
        """The link that orders by `name`, or reverses that order."""
        current = (self.query.get("order_by") or "").strip()
        target = f"{name} desc" if current == name else name
        return self.link(order_by=target, **{"continue": None})

    def sorted_by(self, name):
        """`ascending`/`descending` when the page is ordered by `name`, else None."""
        current = " ".join((self.query.get("order_by") or "").split())
        if current == name:
            return "ascending"
        if current == f"{name} desc":
            return "descending"
        return None


def export(list_key, views, fetch, orderings):
    """The list's whole match as CSV, as the API's list answers `format=csv`
    (inventory.http.csv_export: the same walk, columns and bounds, the
    caller's scope): for the query's `filter` and `order_by`; a 422 (the
    error page) for a query the list refuses or a match past the bound."""
    try:
        args = _parser.parse(views.list_args(), request, location="query")
    except HTTPException as error:
        messages = (getattr(error, "data", None) or {}).get("messages", {})
        entry = (validation_entries(messages) or [error_entry("query", "Not a query this "
                                                              "list takes.")])[0]
        raise RequestError(422, entry["location"], entry["message"], entry["value"]) from None
    args = {name: value for name, value in args.items() if name in ("filter", "order_by")}
    return list_page(list_key, {**args, "format_": "csv"}, fetch, orderings, views.columns,
                     f"{list_key}.csv")


def read(path, list_key, args_schema, fetch, orderings, default_order=None):
    """The Listing of the list `list_key` for this request's query: the
    page `fetch(PageRequest)` answers, or the errors that refused it;
    ordered by `default_order` (an `order_by`) when the query names none."""
    given = {name: value for name, value in request.args.items(multi=False)}
    listing = Listing(path, {name: given.get(name, "") for name in PARAMETERS},
                      sortable=tuple(o.fields[0][0] for o in orderings.declared
                                     if len(o.fields) == 1))
    try:
        args = _parser.parse(args_schema(), request, location="query")
    except HTTPException as error:
        messages = (getattr(error, "data", None) or {}).get("messages", {})
        for entry in validation_entries(messages):
            listing.errors[entry["location"].split(".", 1)[-1]] = entry["message"]
        if not listing.errors:
            listing.errors["query"] = "This query is not one this list takes."
        listing.failed = True
        return listing
    if default_order and not args.get("order_by"):
        args["order_by"] = listing.query["order_by"] = default_order
    try:
        envelope = list_page(list_key, args, fetch, orderings)
    except (BadFilter, BadOrdering, BadContinuation) as error:
        (entry,) = entries_of(error)
        listing.errors[entry["location"].split(".", 1)[-1]] = entry["message"]
        listing.failed = True
        return listing
    listing.records = envelope["results"]
    listing.next_token = envelope["pagination"]["continue_"]
    return listing


def first_page(fetch, spec, limit, more=False, **args):
    """The records of the first bounded page of `spec`'s list for `args`
    (its `filter`, `order_by`), as the API would list them; with `more`,
    and whether more may follow (a filtered page examines a bounded number
    of records: it may be short, even empty, and go on)."""
    asked, _ = page_request(spec.path, {"limit": limit, **args}, spec.orderings)
    page = fetch(asked)
    return (page.records, page.next_after is not None) if more else page.records
