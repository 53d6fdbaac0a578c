"""How a declared column's cell, or a record's field, shows its value
(inventory/ui/declared.py): each kind a function of the value to HTML in
which every piece of the value is escaped (markupsafe's `escape`, as
the templates' autoescape would). Written here rather than as template macros:
a list page shows a cell per column per row, and a Jinja macro call costs
several times what a function call does (bench/console.py). The templates
call `row` (a list's row) and `fields` (a record's fields), and `status` and
`organization` wherever they show one."""
from urllib.parse import urlencode

from markupsafe import Markup, escape

from inventory.ui.pages import blp, on_day, organization_title, shown, when


@blp.app_template_global("status")
def status(value):
    """A status as a badge (support, readiness, a check's result)."""
    value = escape(value)
    return Markup(f'<span class="status {value}">{value}</span>')


@blp.app_template_global("organization")
def organization(organization_id, unscoped="all"):
    """An organization by its title, leading to its clusters; its id only
    where the caller may not see it (or it is gone); `unscoped` for none."""
    if not organization_id:
        return _none(unscoped)
    title = organization_title(organization_id)
    if title is None:
        return _code(organization_id)
    return _link("/ui/clusters?" + urlencode({"filter": f'organization="{organization_id}"'}),
                 escape(title))


def _none(missing):
    return Markup(f'<span class="none">{escape(missing)}</span>')


def _link(href, html):
    return Markup(f'<a href="{escape(href)}">{html}</a>')


def _text(value, column=None):
    return escape(value)


def _code(value, column=None):
    return Markup(f"<code>{escape(value)}</code>")


def _when(value, column):
    return when(value)


def _on_day(value, column):
    return on_day(value)


def _status(value, column):
    return status(value)


def _organization(value, column):
    return organization(value, column.missing if column.missing != "—" else "all")


def _when_by(value, column):
    """(a time, who): `2026-11-25 19:47 UTC (3 days ago) by ci`."""
    moment, who = value
    return Markup(f"{when(moment)} by {escape(who)}") if who else when(moment)


def _support(value, column):
    """A cluster's support: its status, and until when."""
    found = status(value["status"])
    return Markup(f"{found} until {on_day(value['ends_on'])}") if value.get("ends_on") else found


def _active(value, column):
    """A webhook's state: active, or inactive and why."""
    if value["active"]:
        return Markup("active")
    reason = value.get("inactive_reason")
    return Markup(f"<strong>inactive</strong>: {escape(reason)}" if reason
                  else "<strong>inactive</strong>")


def _changes(value, column):
    """An event's changed fields, each from its old value to its new one."""
    return Markup("".join(f"<div><code>{escape(name)}</code>: {escape(shown(change.get('from')))}"
                          f" → {escape(shown(change.get('to')))}</div>"
                          for name, change in value.items()))


# kind -> how it shows a value; the kinds in SPEAKS_OF_NONE show None
# themselves (`never`, `not known`, `all`), the others as the column's `missing`
KINDS = {"text": _text, "prose": _text, "code": _code, "when": _when, "on_day": _on_day,
         "status": _status, "organization": _organization, "when_by": _when_by,
         "support": _support, "active": _active, "changes": _changes}
SPEAKS_OF_NONE = frozenset(("when", "on_day", "organization", "when_by", "active"))
PROSE = ' class="text"'  # a field of prose keeps its line breaks (console.css)


def cell(column, record):
    """The HTML of `column` for `record`: its value as its kind shows it,
    linked when the column declares a link."""
    value = column.value(record)
    if (value is None or value == "") and column.shown not in SPEAKS_OF_NONE:
        found = _none(column.missing)
    else:
        found = KINDS[column.shown](value, column)
    return _link(column.link(record), found) if column.link else found


@blp.app_template_global("row")
def row(columns, record):
    """A list row's cells: the first its header (`th scope=row`), the others
    data (one call a row: a list page shows many)."""
    first, *rest = columns
    return Markup(f'<th scope="row">{cell(first, record)}</th>'
                  + "".join(f"<td>{cell(column, record)}</td>" for column in rest))


@blp.app_template_global("fields")
def fields(columns, record):
    """A record's fields as a description list's terms and details (prose
    keeps its line breaks)."""
    return Markup("\n".join(
        f"<dt>{escape(column.label)}</dt><dd{PROSE if column.shown == 'prose' else ''}>"
        f"{cell(column, record)}</dd>" for column in columns))

