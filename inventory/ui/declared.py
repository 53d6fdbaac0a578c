"""Console pages made from declarations: a resource says which columns its
list shows and which fields its record page shows (`Declared`), and
`declare` makes its list page (`/ui/<path>`: the filter, sorting and
paging of every list page, read as the API's list) and its record page
(`/ui/<path>/<key>`). A resource with more to show on its record (a
rollout's stages) names its own template, which extends the generic one
(`ui/declared_record.html`) and fills its `more` block."""
from dataclasses import dataclass, field
from typing import Any, Callable

from flask import request, url_for

from inventory.http.auth import current_scope
from inventory.store import get_store
from inventory.ui import lists
from inventory.ui.pages import page, render


@dataclass(frozen=True)
class Column:
    """One column of a list page, or one field of a record page."""

    label: str
    value: Callable[[dict], Any]  # the shown value, from the record as the API answers it
    sort: str | None = None  # the ordering it sorts by, when the list has one
    link: bool = False  # a list's cell links to the record's page
    code: bool = False  # shown as code (names, filters)


def of(path):
    """The record's value at a dotted `path` (None where absent)."""
    def value(record):
        for part in path.split("."):
            record = record.get(part) if isinstance(record, dict) else None
        return record
    return value


@dataclass(frozen=True)
class Declared:
    """What a resource's console pages show."""

    spec: Any  # its ResourceSpec: its path, key, orderings
    views: Any  # its views module's RecordList (inventory.http.generic): its list's arguments
    title: str  # the list page's heading ("Rollouts")
    singular: str  # a record page's heading ("Rollout")
    columns: tuple  # of Column, for the list
    fields: tuple  # of Column, for the record page
    filter_example: str = ""
    record_template: str = "declared_record.html"
    context: Callable | None = None  # (record) -> more for its template
    role: str = "reader"
    address: str = "name"  # the record's field its path names it by
    endpoints: dict = field(default_factory=dict)  # filled by `declare`

    @property
    def key(self):
        return self.spec.path_key.name


def declare(declared):
    """Make the list and record pages of `declared`; their endpoints."""
    spec, path = declared.spec, declared.spec.path
    store_of = lambda: getattr(get_store(), spec.name)  # noqa: E731 (found at each request)

    def list_view():
        listing = lists.read(request.path, path, declared.views.list_args,
                             store_of().list, spec.orderings)
        listing.sortable = tuple(column.sort for column in declared.columns if column.sort)
        return render("declared_list.html", 422 if listing.failed else 200, listing=listing,
                      declared=declared, record_link=_record_link(declared))
    list_view.__name__ = f"{spec.name}_list"
    page(f"/{path}", role=declared.role)(list_view)

    def record_view(**keys):
        record = store_of().get(keys[declared.key], current_scope())
        more = declared.context(record) if declared.context else {}
        return render(declared.record_template, declared=declared, record=record,
                      list_link=url_for(f"ui.{list_view.__name__}"), **more)
    record_view.__name__ = f"{spec.name}_record"
    page(f"/{path}/<{declared.key}>", role=declared.role)(record_view)
    declared.endpoints.update(list=f"ui.{list_view.__name__}",
                              record=f"ui.{record_view.__name__}")
    return declared


def _record_link(declared):
    def link(record):
        return url_for(declared.endpoints["record"], **{declared.key: record[declared.address]})
    return link
