"""Console pages made from declarations: a resource says which columns its
list shows and which fields its record page shows (`Declared`), and
`declare` makes its list page (`/ui/<path>`: the filter, sorting and
paging of every list page, read as the API's list), its record page
(`/ui/<path>/<key>`, when it declares fields), its CSV export
(`/ui/<path>.csv`, when it declares `export`) and its place in the
console's menu. A resource with more to show names its own template, which
extends the generic one (`ui/declared_list.html`: blocks `before` and
`actions`; `ui/declared_record.html`: blocks `actions` and `more`).

Each resource's declaration is the module of this package named after it
(`inventory/ui/<resource>.py`); `modules` finds them from the resources'
specs, as `inventory.resources` finds the resources' folders."""
import importlib.util
from dataclasses import dataclass, field, replace
from typing import Any, Callable
from urllib.parse import quote, urlencode

from flask import request

from inventory import resources
from inventory.http.auth import current_scope
from inventory.store import get_store
from inventory.ui import lists
from inventory.ui.cells import KINDS
from inventory.ui.pages import MENU, page, render


@dataclass(frozen=True)
class Column:
    """One column of a list page, or one field of a record page."""

    label: str
    value: Callable[[dict], Any]  # the shown value, from the record as the API answers it
    shown: str = "text"  # how: a kind of inventory/ui/cells.py (KINDS)
    sort: str | None = None  # the ordering it sorts by, when the list has one
    link: Any = None  # True: to the record's page; or (record) -> URL
    missing: str = "—"  # what a None or empty value shows as (organization: "all")

    def __post_init__(self):
        if self.shown not in KINDS:
            raise ValueError(f"{self.label}: shown={self.shown!r} is not one of {tuple(KINDS)}")


def of(path):
    """The record's value at a dotted `path` (None where absent)."""
    parts = path.split(".")
    if len(parts) == 1:
        return lambda record: record.get(path)

    def value(record):
        for part in parts:
            record = record.get(part) if isinstance(record, dict) else None
        return record
    return value


def filtered(path, field_name, key="name"):
    """(record) -> the console list `path` filtered to `field_name` equal
    to the record's `key` (a platform's name leads to its clusters)."""
    prefix = f"/ui/{path}?"
    return lambda record: prefix + urlencode({"filter": f"{field_name}={quoted(record[key])}"})


def quoted(text):
    """`text` as a filter's string value."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Declared:
    """What a resource's console pages show."""

    spec: Any  # its ResourceSpec: its path key, orderings, store's name
    views: Any  # its views module's RecordList (inventory.http.generic): its list's arguments and CSV columns
    title: str  # the list page's heading ("Rollouts")
    singular: str  # a record page's heading ("Rollout")
    columns: tuple  # of Column, for the list
    fields: tuple = ()  # of Column, for the record page (none: no record page)
    path: str = ""  # the console's path (default: the API's, spec.path)
    filter_example: str = ""
    list_args: Callable | None = None  # its list's arguments schema (default: views')
    fetch: Callable | None = None  # (store) -> its list's page function (default: .list)
    list_template: str = "declared_list.html"
    record_template: str = "declared_record.html"
    context: Callable | None = None  # (record) -> more for its record template
    role: str = "reader"
    address: str = "name"  # the record's field its path names it by
    heading: Callable | None = None  # (record) -> the record page's name (default: address)
    export: bool = False  # an Export CSV link, the API's own CSV of the whole match
    menu: int | None = None  # its place in the console's menu (None: not in it)
    endpoints: dict = field(default_factory=dict)  # filled by `declare`

    @property
    def key(self):
        return self.spec.path_key.name

    @property
    def page_path(self):
        return self.path or self.spec.path

    def record_link(self, record):
        return f"/ui/{self.page_path}/{quote(str(record[self.address]), safe='')}"

    def shown_name(self, record):
        return self.heading(record) if self.heading else record[self.address]

    def store(self):
        return getattr(get_store(), self.spec.name)

    def list_page(self, status=None, **more):
        """The list page for this request's query (with `more` for its
        template): 422 when the query is refused, else `status` or 200."""
        fetch = self.fetch(get_store()) if self.fetch else self.store().list
        listing = lists.read(request.path, self.spec.path,
                             self.list_args or self.views.list_args, fetch, self.spec.orderings)
        export = f"/ui/{self.page_path}.csv" if self.export else None
        return render(self.list_template, 422 if listing.failed else status or 200,
                      listing=listing, declared=self, export=export, **more)

    def record_page(self, key):
        record = self.store().get(key, current_scope())
        more = dict(self.context(record)) if self.context else {}
        status = more.pop("status", 200)
        return render(self.record_template, status, declared=self, record=record, **more)

    def export_csv(self):
        fetch = self.fetch(get_store()) if self.fetch else self.store().list
        return lists.export(self.spec.path, self.views, fetch, self.spec.orderings)


def declare(declared):
    """Make the pages of `declared` (its columns' `link=True` leading to its
    record page); their endpoints: `ui.<path>` (the list), `ui.<kind>` (a
    record), `ui.<path>_csv` (the export)."""
    declared = replace(declared, columns=tuple(
        replace(column, link=declared.record_link) if column.link is True else column
        for column in declared.columns))
    name, kind = declared.page_path, declared.spec.kind

    def list_view():
        return declared.list_page()
    list_view.__name__ = name
    page(f"/{name}", role=declared.role)(list_view)
    declared.endpoints["list"] = f"ui.{name}"

    if declared.fields:
        def record_view(**keys):
            return declared.record_page(keys[declared.key])
        record_view.__name__ = kind
        page(f"/{name}/<{declared.key}>", role=declared.role)(record_view)
        declared.endpoints["record"] = f"ui.{kind}"

    if declared.export:
        def csv_view():
            return declared.export_csv()
        csv_view.__name__ = f"{name}_csv"
        page(f"/{name}.csv", role=declared.role)(csv_view)
        declared.endpoints["csv"] = f"ui.{name}_csv"
    if declared.menu is not None:
        MENU.append((declared.menu, declared.title, f"/ui/{name}", declared.role))
        MENU.sort()
    return declared


def modules():
    """The names of this package's modules that declare a resource's pages:
    those named after a resource (`inventory/ui/<resource>.py`)."""
    return [f"{__package__}.{spec.name}" for spec in resources.SPECS
            if importlib.util.find_spec(f"{__package__}.{spec.name}") is not None]
