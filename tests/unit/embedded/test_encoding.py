"""The journal's encoding (inventory/embedded/encoding.py): a write's line
reads back as json_util's own relaxed extended JSON does, type for type,
whichever of orjson and json_util wrote it; a snapshot record is BSON, or
its JSON line where BSON cannot hold it."""
import datetime
import os

import bson
import pytest
from bson import Decimal128, Int64, ObjectId, json_util

from inventory.embedded import encoding

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


@pytest.mark.parametrize("writer", ["orjson", "json_util"])
def test_lines_are_json_utils_relaxed_extended_json(writer):
    """orjson writes and reads the plain JSON, json_util everything else (and
    whole lines holding null or infinities): a line reads back as json_util's
    own output does, type for type."""
    document = {"_id": ObjectId(), "t": True, "i": 1, "x": 1.0, "e": 1e16, "big": 2 ** 62,
                "u": "é\u2028", "none": None, "nan": float("inf"), "l": Int64(5),
                "d": Decimal128("1.5"), "at": datetime.datetime(2020, 1, 1, 0, 0, 0, 5000),
                "raw": b"ab", "nested": [1, [2, {"k": "v"}]], "pair": (1, 2)}
    if writer == "orjson":
        del document["none"], document["nan"]
    line = encoding.encode([{"c": "x", "put": document}])
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    theirs = json_util.loads(json_util.dumps([{"c": "x", "put": document}],
                                             json_options=json_util.RELAXED_JSON_OPTIONS),
                             json_options=json_util.RELAXED_JSON_OPTIONS)
    ours = encoding.decode(line)
    assert ours == theirs and json_util.loads(line) == theirs
    assert [type(v) for v in ours[0]["put"].values()] == \
        [type(v) for v in theirs[0]["put"].values()]


def test_a_line_with_nulls_and_no_infinities_is_orjsons(monkeypatch):
    """orjson writes None and NaN alike as null: a line holding null goes to
    json_util only when a float NaN or infinity is in it (issue 43: a
    document with a null field, common, was json_util's walk each write)."""
    document = {"_id": "k", "none": None, "nested": [1, {"also": None}], "pair": (None, 2.5)}
    real = json_util.dumps
    calls = []
    monkeypatch.setattr(encoding.json_util, "dumps",
                        lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    line = encoding.encode([{"c": "x", "put": document}])
    assert calls == []
    assert encoding.decode(line) == [{"c": "x", "put": {**document, "pair": [None, 2.5]}}]
    for hidden in ({"deep": [{"x": float("nan")}], "none": None},
                   {"pair": (None, float("-inf"))}):
        line = encoding.encode([{"c": "x", "put": hidden}])
        assert len(calls) == 1  # json_util writes them as {"$numberDouble": ...}
        calls.clear()
        assert line == real([{"c": "x", "put": hidden}],
                            json_options=json_util.RELAXED_JSON_OPTIONS).encode() + b"\n"


def test_dates_decode_as_json_util_decodes_them_on_the_fast_path():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=500, deadline=None)
    @given(st.datetimes(min_value=datetime.datetime(1900, 1, 1),
                        max_value=datetime.datetime(9999, 12, 31)))
    def same(moment):
        moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)  # BSON's precision
        line = encoding.encode([{"at": moment}])
        reference = json_util.loads(line, json_options=json_util.RELAXED_JSON_OPTIONS)[0]["at"]
        assert encoding.decode(line)[0]["at"] == reference == moment
    same()


def test_a_snapshot_record_is_bson_or_its_json_line_where_bson_cannot_hold_it():
    plain = {"c": "x", "put": {"_id": "a", "at": datetime.datetime(2026, 1, 2, 3, 4, 5, 6000)}}
    document = bson.decode(encoding.encode_snapshot_record(plain), encoding.BSON_OPTIONS)
    assert "line" not in document and encoding.decode_snapshot_record(document) == [plain]
    for record in ({"c": "x", "put": {"_id": "big", "n": 2 ** 70}},
                   {"c": "x", "put": {"_id": "nul", "a\x00b": 1}}):
        wrapped = bson.decode(encoding.encode_snapshot_record(record))
        assert set(wrapped) == {"line"} and wrapped["line"] == encoding.encode([record])
        assert encoding.decode_snapshot_record(wrapped) == [record]
