"""How the journal writes its records down: one line of BSON's relaxed
extended JSON per write (orjson for the plain JSON, json_util for the
rest), and one BSON document per snapshot record.

The format, and why: docs/design/journal.md"""
import datetime
import math
import re

import bson
import orjson
from bson import json_util
from bson.codec_options import CodecOptions
from bson.errors import BSONError

_OPTIONS = json_util.RELAXED_JSON_OPTIONS
_ORJSON = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
# Snapshots are BSON, which pymongo's C extension decodes 3-4 times as fast
# as the journal's JSON lines and their types (a start at a million records
# is mostly this). A snapshot written as JSON lines by an earlier version is
# still read. Datetimes come back naive UTC, as the JSON lines' do.
BSON_OPTIONS = CodecOptions(tz_aware=False)


def _default(value):
    """Extended JSON of what orjson leaves alone (datetimes, ObjectIds,
    bytes, subclasses of str/int such as bson's)."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    return json_util.default(value, _OPTIONS)


def encode(records):
    """One line of relaxed extended JSON, as `json_util.dumps` writes it."""
    try:
        line = orjson.dumps(records, default=_default, option=_ORJSON)
        # orjson writes NaN and infinities as null, as it writes None: only
        # those go to json_util (a document with a null field is common, and
        # json_util's walk in Python cost a scan's POST some 150 us a write)
        if b"null" not in line or not _non_finite_in(records):
            return line + b"\n"
    except (orjson.JSONEncodeError, TypeError):
        pass
    return json_util.dumps(records, json_options=_OPTIONS).encode() + b"\n"


def _non_finite_in(value):
    """Whether a float NaN or infinity is anywhere in `value` (dicts, lists, tuples)."""
    if value.__class__ is float:
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_non_finite_in(inner) for inner in value.values())
    if isinstance(value, (list, tuple)):
        return any(_non_finite_in(inner) for inner in value)
    return False


_DATE_RE = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\Z")


def _date(text):
    """The naive UTC datetime json_util makes of `{"$date": text}`, for the
    form it writes (milliseconds, Z): at start, a million of them take
    seconds through its strptime, and well under one through fromisoformat."""
    if _DATE_RE.match(text):
        return datetime.datetime.fromisoformat(text[:-1])
    return json_util.object_hook({"$date": text}, _OPTIONS)


def _decoded(value):
    """`value` with json_util's object hook applied to every object, bottom up."""
    if isinstance(value, list):
        return [_decoded(item) if isinstance(item, (dict, list)) else item for item in value]
    for key, inner in value.items():
        if isinstance(inner, (dict, list)):
            value[key] = _decoded(inner)
    if len(value) == 1 and isinstance(value.get("$date"), str):
        return _date(value["$date"])
    return json_util.object_hook(value, _OPTIONS)


def decode(line):
    """The records of one line (orjson for the syntax, json_util for the types)."""
    try:
        records = orjson.loads(line)
    except orjson.JSONDecodeError:
        return json_util.loads(line, json_options=_OPTIONS)
    # only an object with a key starting with `$` can be extended JSON
    return _decoded(records) if b'"$' in line else records


def encode_snapshot_record(record):
    """One snapshot record as BSON; one BSON cannot hold (an integer past 64
    bits, a key with a NUL, a UUID without a representation, a lone
    surrogate) is wrapped as its JSON line."""
    try:
        return bson.encode(record)
    except (BSONError, OverflowError, ValueError, TypeError):  # UnicodeEncodeError too
        return bson.encode({"line": encode([record])})


def decode_snapshot_record(document):
    """The records of one snapshot document."""
    return decode(document["line"]) if "line" in document else [document]
