"""CSV answers of the lists: the whole match, streamed, never truncated.

    return csv_response(fetch, page_request, RecordColumns(schema), "kubeclusters.csv")

`fetch(PageRequest) -> Page` is what the list's JSON pages are read with,
and `page_request` the caller's request as the JSON list parsed it (its
filter, order, `continue` and organization scope): the CSV walks the same
pages, by the same range queries, a page of PAGE records at a time. The
columns are any object with `sheet()` (see `Columns`): `RecordColumns`
flattens a list's record schema; `Columns(names, row)` takes fixed columns
and a row maker (the console's export).

Whole or not at all: the match is walked twice. The first walk counts it
(and finds the label keys that become columns) before the first byte: past
MAX_CSV_ROWS records or MAX_CSV_COLUMNS columns it is a 422 in the error
body, as any bad request is. The second walk streams the rows. If the match
grows past the bound meanwhile, or a record gains a label the header lacks,
or the store fails, the stream is broken off (`ExportBroken`): the server
then closes the connection without the chunked body's last chunk, so no
client can take what it got for the whole file.

The design, and why: docs/design/csv.md"""
import io
import logging
import re
from dataclasses import replace

import orjson
from flask import Response, request
from marshmallow import fields

from inventory.core.caps import MAX_CSV_COLUMNS, MAX_CSV_ROWS, REQUEST_TIMEOUT
from inventory.core.filtering import path_text
from inventory.core.turns import Turns
from inventory.http.dumping import compiled_dump
from inventory.http.errors import RequestError

CSV = "text/csv"
JSON = "application/json"
PAGE = 100  # records read at once: the JSON lists' largest page
# A cell a spreadsheet would read as a formula (OWASP, CSV injection) starts
# with one of these (full-width forms too, which some spreadsheets take for
# the ASCII ones); it is written after a `'`, which spreadsheets show as text.
FORMULA_STARTS = frozenset("=+-@\t\r\n\uff1d\uff0b\uff0d\uff20")
# A spreadsheet that splits on another separator than the comma (`;` where
# the decimal mark is a comma; tab, pipe) reads quotes only at the start of
# what it takes for a cell: in `x,"a;=cmd"` it takes `=cmd"` for a cell of
# its own, and after a line break it starts a row. So a formula's start
# right after one of these inside a cell (past any quotes and spaces) is
# written after a `'` too.
_FORMULA_AFTER_SPLIT = re.compile('([;\t|\r\n][" ]*)([=+\\-@\uff1d\uff0b\uff0d\uff20])')
# A cell holding a separator that a spreadsheet may split on (the comma; by
# its locale a `;`; by its import's choice a tab or pipe), a quote or a line
# break is quoted (RFC 4180, its quotes doubled): read from its start with
# any of them for the separator, it stays one cell.
_QUOTED = re.compile('[,;\t|"\r\n]')

log = logging.getLogger(__name__)


class ExportBroken(RuntimeError):
    """The stream cannot go on as a whole file: the server breaks the connection."""


def wants_csv(args, offered=(JSON,)):
    """Whether a list answers CSV: `format` decides when it is given
    (`csv` or `json`: a link can say it, whatever the browser's Accept);
    else `Accept`, when it prefers text/csv to everything `offered`."""
    if args.get("format_"):
        return args["format_"] == "csv"
    return request.accept_mimetypes.best_match([*offered, CSV]) == CSV


def neutralised(text):
    """`text` as a cell no spreadsheet takes for a formula, whatever
    separator it splits rows on."""
    if not text:
        return text
    if _FORMULA_AFTER_SPLIT.search(text) is not None:  # rare: a search costs a tenth of a sub
        text = _FORMULA_AFTER_SPLIT.sub(r"\1'\2", text)
    return f"'{text}" if text[0] in FORMULA_STARTS else text


def line(cells):
    """One CSV record of `cells` (text), CRLF-ended: a cell is quoted when
    it holds a separator of any locale, a quote or a line break (_QUOTED),
    its quotes doubled."""
    return ",".join(f'"{text.replace(chr(34), chr(34) * 2)}"' if _QUOTED.search(text) else text
                    for text in cells) + "\r\n"


def cell(value):
    """A JSON value as CSV text: null empty, booleans `true`/`false`,
    numbers as JSON writes them, text neutralised, anything else (lists,
    objects) as compact JSON."""
    kind = value.__class__
    if kind is str:
        return neutralised(value)
    if value is None:
        return ""
    if kind is bool:
        return "true" if value else "false"
    if kind is int or kind is float:
        return repr(value)
    return neutralised(orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode())


class Columns:
    """Fixed columns: `names` (the header) and `row(record)`, the record's
    values in that order (as JSON values; `cell` writes them)."""

    def __init__(self, names, row):
        self.names, self.row = list(names), row

    def sheet(self):
        """What one answer writes with: `see(record)` while counting,
        `header()`, `row(record)`."""
        return _FixedSheet(self.names, self.row)


class _FixedSheet:
    def __init__(self, names, row):
        self.header, self.row = (lambda: names), row

    def see(self, record):
        pass


class RecordColumns(Columns):
    """The columns of a list's records, flattened from their schema (the one
    the JSON list dumps them with): a nested object's fields as dotted
    columns (`support.status`), a map of text (labels) as one column per key
    the match holds (`labels.team`, keys in order), lists and other objects
    as one column of compact JSON; in the schema's field order."""

    def __init__(self, schema):
        self.dump = compiled_dump(schema) or schema.dump
        self.plan = list(_flattened(schema, ()))

    def sheet(self):
        return _RecordSheet(self)


def _flattened(schema, prefix):
    """(column name, path, kind) of a schema's dumped fields; kind: "value",
    "json" or "map" (its columns are its keys, found per answer)."""
    for name, field in schema.dump_fields.items():
        key = field.data_key if field.data_key is not None else name
        if key.startswith("$"):  # `$schema`: the envelope's, not a record's
            continue
        path = (*prefix, key)
        if isinstance(field, fields.Nested) and not (field.many or field.schema.many):
            yield from _flattened(field.schema, path)
        elif isinstance(field, fields.Mapping) and isinstance(field.value_field, fields.String):
            yield ".".join(path), path, "map"
        elif isinstance(field, (fields.Mapping, fields.List, fields.Nested, fields.Raw)):
            yield ".".join(path), path, "json"
        else:
            yield ".".join(path), path, "value"


def _at(record, path):
    for part in path:
        if not isinstance(record, dict):
            return None
        record = record.get(part)
    return record


class _RecordSheet:
    def __init__(self, columns):
        self.columns = columns
        self.keys = {path: set() for _, path, kind in columns.plan if kind == "map"}
        self.fixed = sum(kind != "map" for _, _, kind in columns.plan)
        self.getters = None

    def see(self, record):
        for path, keys in self.keys.items():
            found = _at(record, path)
            if found:
                keys.update(found)
        if self.fixed + sum(map(len, self.keys.values())) > MAX_CSV_COLUMNS:
            raise RequestError(422, "query.filter", f"The match would make more than "
                               f"{MAX_CSV_COLUMNS:,} columns (one per label key): narrow the "
                               "filter (a CSV is never truncated).")

    def header(self):
        names = []
        for name, path, kind in self.columns.plan:
            if kind == "map":
                # named as a filter names the field: `labels."app.kubernetes.io/name"`
                names.extend(path_text((*path, key)) for key in sorted(self.keys[path]))
            else:
                names.append(name)
        return names

    def row(self, record):
        record = self.columns.dump(record)
        values = []
        for _, path, kind in self.columns.plan:
            value = _at(record, path)
            if kind == "map":
                value = value or {}
                known = self.keys[path]
                if not known.issuperset(value):
                    raise ExportBroken(f"a record gained {'.'.join(path)} keys after the "
                                       "header was written")
                values.extend(value.get(key) for key in sorted(known))
            else:
                values.append(value)
        return values


def csv_response(fetch, page_request, columns, filename, filter_text=None):
    """The streamed `text/csv` answer of every record `fetch` walks from
    `page_request` on (its `limit` aside), with a header row; a 422 past
    the bounds, before the first byte (see the module's docstring).
    `filter_text` is echoed in that error."""
    # records read as values (`answered` no more: a cell is made of each field)
    first = replace(page_request, limit=PAGE, answered=False)
    sheet = columns.sheet()
    turns = Turns()
    counted, after = 0, first.after
    while True:
        page = fetch(replace(first, after=after))
        counted += len(page.records)
        if counted > MAX_CSV_ROWS:
            raise RequestError(422, "query.filter", f"More than {MAX_CSV_ROWS:,} records "
                               "match: narrow the filter (a CSV is never truncated).",
                               filter_text)
        for record in page.records:
            sheet.see(record)
        if not page.next_after:
            break
        after = page.next_after
        turns.check()
    # each page written lets the answer run REQUEST_TIMEOUT more: a slow
    # reader is cut off as any is, a long export is not
    extend = request.environ.get("inventory.extend_answer")
    return Response(_rows(fetch, first, sheet, turns, extend),
                    content_type=f"{CSV}; charset=utf-8",
                    headers={"Content-Disposition": f'attachment; filename="{filename}"'})


def _rows(fetch, first, sheet, turns, extend):
    buffer = io.StringIO()
    yield line([neutralised(name) for name in sheet.header()]).encode()
    written, after = 0, first.after
    while True:
        buffer.seek(0)
        buffer.truncate()
        try:
            page = fetch(replace(first, after=after))
            written += len(page.records)
            if written > MAX_CSV_ROWS:
                raise ExportBroken(f"the match grew past {MAX_CSV_ROWS:,} records")
            for record in page.records:
                buffer.write(line([cell(value) for value in sheet.row(record)]))
        except Exception as error:  # the store failed, or the match changed under the header
            log.warning("CSV export broken off after %d records: %s", written, error)
            if isinstance(error, ExportBroken):
                raise
            raise ExportBroken(str(error)) from error
        if buffer.tell():
            yield buffer.getvalue().encode()
        if not page.next_after:
            return
        after = page.next_after
        if extend is not None:
            extend(REQUEST_TIMEOUT)
        turns.check()
