"""inventory.http.csv_export, on its own: a cell no spreadsheet takes for a
formula (whatever separator it splits on), RFC 4180 quoting, JSON values as
cells, whether a list answers CSV, a record schema's columns, and the
answer's whole-or-nothing rule (counted before the first byte, broken off
when the match changes while it streams). Through HTTP, on every list:
tests/api/test_csv_export.py."""
import pytest
from marshmallow import Schema, fields

from inventory.core.errors import ServiceError
from inventory.http import csv_export
from inventory.http.csv_export import Columns, ExportBroken, RecordColumns, csv_response, wants_csv
from inventory.http.errors import RequestError
from inventory.store.pages import Page, PageRequest


@pytest.mark.parametrize("text, cell", [
    ("=1+2", "'=1+2"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("a=1", "a=1"), ("", ""), ("'x", "'x")])
def test_neutralised(text, cell):
    assert csv_export.cell(text) == cell


@pytest.mark.parametrize("text, cell", [
    ("\nx", "'\nx"), ("\uff1d1+2", "'\uff1d1+2"), ("\uff0b1", "'\uff0b1"),
    ("\uff0d1", "'\uff0d1"), ("\uff20SUM(A1)", "'\uff20SUM(A1)"),
    # a formula's start right after a separator of another locale, or a line break
    ("a;=cmd|' /C calc'!A0;b", "a;'=cmd|' /C calc'!A0;b"), ("a\t+1", "a\t'+1"),
    ("a|@x", "a|'@x"), ('a;"=x', 'a;"\'=x'), ("a; -1", "a; '-1"), ("one\n=x", "one\n'=x"),
    ("one\r\n@x", "one\r\n'@x"), ("a;\uff1dx", "a;'\uff1dx"), ("=a;=b", "'=a;'=b"),
    # no split before it (quoted, a comma keeps the cell whole): as it is
    ("a=1;b", "a=1;b"), ("a,=1", "a,=1"), ("x-1;y", "x-1;y")])
def test_neutralised_in_every_locale(text, cell):
    assert csv_export.cell(text) == cell


@pytest.mark.parametrize("cells, text", [
    (["a", "b"], "a,b\r\n"), (["a,b"], '"a,b"\r\n'), (["a;b", "c"], '"a;b",c\r\n'),
    (["a\tb"], '"a\tb"\r\n'), (["a|b"], '"a|b"\r\n'), (['say "hi"'], '"say ""hi"""\r\n'),
    (["l1\nl2"], '"l1\nl2"\r\n'), (["", "x"], ",x\r\n")])
def test_a_cell_with_a_separator_of_any_locale_is_quoted(cells, text):
    assert csv_export.line(cells) == text


@pytest.mark.parametrize("value, cell", [(None, ""), (True, "true"), (False, "false"), (-3, "-3"),
                                         (1.5, "1.5"), ([1, "a"], '[1,"a"]'),
                                         ({"b": 1, "a": None}, '{"a":null,"b":1}')])
def test_cells_of_json_values(value, cell):
    assert csv_export.cell(value) == cell


def paged(records, asked=None):
    """`fetch` of `records` in pages (the store's contract: `after` the
    bound the last page stopped at, `next_after` None on the last page);
    each PageRequest is noted in `asked`."""
    def fetch(request):
        if asked is not None:
            asked.append(request)
        start = int(request.after or 0)
        chunk = records[start:start + request.limit]
        end = start + len(chunk)
        return Page(list(chunk), str(end) if end < len(records) else None)
    return fetch


NAMED = Columns(["name", "size"], lambda record: [record["name"], record["size"]])


@pytest.fixture
def context(app):
    """A request context (csv_response and wants_csv read the request)."""
    def enter(path="/", **kwargs):
        pushed = app.test_request_context(path, **kwargs)
        pushed.push()
        contexts.append(pushed)
    contexts = []
    yield enter
    for pushed in reversed(contexts):
        pushed.pop()


def body_of(response):
    return b"".join(response.response).decode()


def test_the_answer_is_a_header_then_every_record_page_after_page(context, monkeypatch):
    context()
    monkeypatch.setattr(csv_export, "PAGE", 2)
    records = [{"name": f"n{i}", "size": i} for i in range(5)]
    asked = []
    response = csv_response(paged(records, asked), PageRequest(limit=20, after=None),
                            NAMED, "things.csv")
    assert response.mimetype == "text/csv"
    assert response.headers["Content-Disposition"] == 'attachment; filename="things.csv"'
    assert body_of(response) == "name,size\r\n" + "".join(f"n{i},{i}\r\n" for i in range(5))
    # counted whole first (3 pages), then streamed (3 pages): the caller's
    # limit aside, PAGE at a time, the records read as plain values
    assert len(asked) == 6
    assert {(request.limit, request.answered) for request in asked} == {(2, False)}


def test_the_walk_starts_where_the_callers_request_does(context):
    context()
    records = [{"name": f"n{i}", "size": i} for i in range(4)]
    response = csv_response(paged(records), PageRequest(limit=1, after="2"), NAMED, "x.csv")
    assert body_of(response) == "name,size\r\nn2,2\r\nn3,3\r\n"


def test_past_the_maximum_rows_it_is_refused_before_the_first_byte(context, monkeypatch):
    context()
    monkeypatch.setattr(csv_export, "MAX_CSV_ROWS", 3)
    records = [{"name": f"n{i}", "size": i} for i in range(3)]
    assert body_of(csv_response(paged(records), PageRequest(limit=20), NAMED, "x.csv")) \
        .count("\r\n") == 4  # at the bound: whole
    records.append({"name": "n3", "size": 3})
    with pytest.raises(RequestError) as refused:
        csv_response(paged(records), PageRequest(limit=20), NAMED, "x.csv",
                     filter_text='size > 0')
    assert (refused.value.status, refused.value.location) == (422, "query.filter")
    assert refused.value.value == "size > 0" and "never truncated" in refused.value.message


def test_a_match_grown_past_the_bound_while_streaming_breaks_the_stream(context, monkeypatch):
    context()
    monkeypatch.setattr(csv_export, "MAX_CSV_ROWS", 3)
    monkeypatch.setattr(csv_export, "PAGE", 1)
    records = [{"name": f"n{i}", "size": i} for i in range(3)]
    response = csv_response(paged(records), PageRequest(limit=20), NAMED, "x.csv")
    records.insert(0, {"name": "early", "size": 0})  # counted 3; 4 by the time it streams
    chunks = iter(response.response)
    assert next(chunks) == b"name,size\r\n"
    with pytest.raises(ExportBroken, match="grew past 3"):
        list(chunks)


def test_a_store_failing_mid_stream_breaks_the_stream_as_export_broken(context):
    context()
    records = [{"name": "a", "size": 1}]
    calls = []

    def fetch(request):
        calls.append(request)
        if len(calls) > 1:
            raise ConnectionError("the database went away")
        return paged(records)(request)
    response = csv_response(fetch, PageRequest(limit=20), NAMED, "x.csv")
    chunks = iter(response.response)
    next(chunks)  # the header
    with pytest.raises(ExportBroken, match="went away") as broken:
        next(chunks)
    assert isinstance(broken.value.__cause__, ConnectionError)


class Support(Schema):
    status = fields.String()


class Thing(Schema):
    schema_ = fields.String(data_key="$schema")
    name = fields.String()
    support = fields.Nested(Support)
    labels = fields.Dict(keys=fields.String(), values=fields.String())
    tags = fields.List(fields.String())
    settings = fields.Dict(keys=fields.String(), values=fields.Integer())


def test_a_record_schema_is_flattened_in_its_field_order():
    """Nested objects dotted, a map of text one column per key, lists and
    other maps as JSON; the envelope's `$schema` is no column."""
    assert [(name, kind) for name, _, kind in RecordColumns(Thing()).plan] == [
        ("name", "value"), ("support.status", "value"), ("labels", "map"), ("tags", "json"),
        ("settings", "json")]


def test_label_keys_become_sorted_columns_named_as_a_filter_names_them(context):
    context()
    records = [{"name": "a", "support": {"status": "ok"}, "labels": {"team": "x"},
                "tags": ["p", "q"], "settings": {"b": 1}},
               {"name": "=b", "labels": {"app.kubernetes.io/name": "y"}}]
    text = body_of(csv_response(paged(records), PageRequest(limit=20), RecordColumns(Thing()),
                                "x.csv"))
    assert text.split("\r\n") == [
        'name,support.status,"labels.""app.kubernetes.io/name""",labels.team,tags,settings',
        'a,ok,,x,"[""p"",""q""]","{""b"":1}"',
        "'=b,,y,,,", ""]


def test_a_record_gaining_a_label_key_after_the_header_breaks_the_stream(context):
    context()
    records = [{"name": "a", "labels": {"team": "x"}}]
    response = csv_response(paged(records), PageRequest(limit=20), RecordColumns(Thing()),
                            "x.csv")
    records[0] = {"name": "a", "labels": {"team": "x", "new": "y"}}
    with pytest.raises(ExportBroken, match="gained labels keys"):
        list(response.response)


def test_more_label_columns_than_the_bound_are_refused_while_counting(context, monkeypatch):
    context()
    monkeypatch.setattr(csv_export, "MAX_CSV_COLUMNS", 5)  # 4 fixed: room for 1 label key
    one = [{"name": "a", "labels": {"k1": "v"}}]
    body_of(csv_response(paged(one), PageRequest(limit=20), RecordColumns(Thing()), "x.csv"))
    two = [*one, {"name": "b", "labels": {"k2": "v"}}]
    with pytest.raises(RequestError, match="more than 5 columns") as refused:
        csv_response(paged(two), PageRequest(limit=20), RecordColumns(Thing()), "x.csv")
    assert isinstance(refused.value, ServiceError) and refused.value.status == 422


@pytest.mark.parametrize("args, accept, as_csv", [
    ({"format_": "csv"}, "application/json", True),
    ({"format_": "json"}, "text/csv", False),
    ({}, "text/csv", True),
    ({}, "text/csv;q=0.5, application/json", False),
    ({}, "*/*", False),
    ({}, None, False)])
def test_format_decides_else_accept_when_it_prefers_csv(context, args, accept, as_csv):
    context(headers={"Accept": accept} if accept else {})
    assert wants_csv(args) is as_csv
