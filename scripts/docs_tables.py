"""The manual's tables that the code decides, made from it (never typed by
hand): `scripts/docs-tables` rewrites each between its markers in its page,
`<!-- NAME:begin (scripts/docs-tables) -->` and `<!-- NAME:end -->`, and
leaves the prose around them; `--check` writes nothing and fails when a page
is stale (tests/system/test_docs_site.py runs it).

- `limits` (docs/limits.md): every client-facing limit, from the constants
  the code enforces (the rows: scripts/docs_limits.py);
- `settings` (docs/configuration.md): every setting, from inventory/config.py;
- `paths` (docs/guide/api.md): every path and operation, from the OpenAPI document,
  with the role each needs (from the operations' declarations);
- `list-fields` (docs/guide/api.md): each list's `filter` fields and
  `order_by` orderings, from the resources' specs and stores;
- `group-fields` (docs/fleet.md): the summary's `group_by` fields, from the specs;
- `event-types` (docs/events.md): the feed's event types, from the specs.
"""
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import docs_limits  # noqa: E402

DOCS = ROOT / "docs"
METHODS = ("get", "post", "put", "patch", "delete")


def _code(names):
    return ", ".join(f"`{name}`" for name in names)


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in rows)])


def _cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def limits_table():
    return _table(("limit", "value", "enforced in"),
                  [(what, value, f"`{where}`") for what, value, where in docs_limits.rows()])


def settings_table():
    from inventory.config import SETTINGS
    return _table(("Variable", "Default", "Meaning"),
                  [(f"`{s.name}`", s.default_text, s.meaning) for s in SETTINGS])


_app = None


def _the_app():
    """An app on the embedded store in memory, with the defaults."""
    global _app
    if _app is None:
        from app import create_app
        from inventory.config import Config
        _app = create_app(Config({}, TESTING=True, INVENTORY_ADMIN_TOKEN="docs-tables"))
    return _app


def paths_table():
    app = _the_app()
    with app.app_context():
        document = app.extensions["inventory.http.api"].openapi_document()
    roles = {declared.operation_id: declared.role
             for declared in app.extensions["inventory.http.operations"].values()}
    rows = []
    for path, item in document["paths"].items():
        operations = [f"{method.upper()} {_cell(item[method].get('summary', ''))} "
                      f"({_role(roles.get(item[method].get('operationId')))})"
                      for method in METHODS if method in item]
        rows.append((f"`{path}`", "; ".join(operations)))
    return _table(("Path", "Operations (the least role that may call them)"), rows)


def _role(role):
    return f"`{role}`" if role else "no token"


def list_path(spec):
    from inventory.resources import SPECS
    if not spec.nested:
        return f"/{spec.path}"
    parent = next(other for other in SPECS if other.name == spec.parent)
    return f"{list_path(parent)}/{{{parent.path_key.name}}}/{spec.path}"


def list_fields_table():
    from inventory.resources import SPECS
    store = _the_app().extensions["inventory.store"]
    rows = []
    for spec in SPECS:
        if spec.path is None or spec.orderings is None:
            continue
        filters = [f"{name}`, `{name}.<key>" if kind == "labels" else name
                   for name, kind in getattr(store, spec.name).filter_fields.items()]
        orderings = [f"`{ordering.text}`" for ordering in spec.orderings.declared]
        rows.append((f"`{list_path(spec)}`", _code(filters), ", ".join(orderings)))
    return _table(("List", "`filter` fields", "`order_by`"), rows)


def group_fields_table():
    from inventory.resources import SPECS
    return _table(("Summary", "`group_by` fields"),
                  [(f"`/{spec.path}:summary`", _code([*spec.group_fields, "labels.<key>"]))
                   for spec in SPECS if spec.group_fields])


def event_types_table():
    from inventory.resources import SPECS
    return _table(("Record", "Event types"),
                  [(f"`{spec.event_kind}`", _code(spec.event_types))
                   for spec in SPECS if spec.event_types])


# name: (page, what makes the block)
BLOCKS = {
    "limits": (DOCS / "limits.md", limits_table),
    "settings": (DOCS / "configuration.md", settings_table),
    "paths": (DOCS / "guide" / "api.md", paths_table),
    "list-fields": (DOCS / "guide" / "api.md", list_fields_table),
    "group-fields": (DOCS / "fleet.md", group_fields_table),
    "event-types": (DOCS / "events.md", event_types_table),
}


def markers(name):
    return f"<!-- {name}:begin (scripts/docs-tables) -->", f"<!-- {name}:end -->"


def rendered(name, page_text):
    """`page_text` with block `name` made anew between its markers."""
    begin, end = markers(name)
    if page_text.count(begin) != 1 or page_text.count(end) != 1:
        raise SystemExit(f"{name}: its page must hold {begin} and {end} once each")
    head, rest = page_text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{BLOCKS[name][1]()}\n{end}{tail}"


def pages():
    """{page: its text with every generated block made anew}."""
    made = {}
    for name, (page, _) in BLOCKS.items():
        made[page] = rendered(name, made.get(page) or page.read_text())
    return made


def stale():
    """The pages whose generated blocks differ from what the code makes."""
    return [page for page, text in pages().items() if page.read_text() != text]


def main(argv):
    if argv == ["--check"]:
        old = stale()
        for page in old:
            print(f"{page.relative_to(ROOT)} is stale: run scripts/docs-tables")
        return 1 if old else 0
    if argv:
        print("usage: scripts/docs-tables [--check]", file=sys.stderr)
        return 2
    for page, text in pages().items():
        if page.read_text() != text:
            page.write_text(text)
            print(f"{page.relative_to(ROOT)}: rewritten")
    return 0


if __name__ == "__main__":
    # Importing app.py makes its app from the environment: in memory, never
    # opening a data directory or a database another process uses.
    for name in ("INVENTORY_DATA_DIR", "MONGODB_URI", "INVENTORY_DEMO"):
        os.environ.pop(name, None)
    sys.exit(main(sys.argv[1:]))
