"""Request parsing rules shared by every blueprint.

webargs' stock JSON loading accepts what a careful API must refuse: NaN and
Infinity, duplicate keys (the last silently wins), bodies that are not JSON at
all (ignored). This parser makes those a 400 or 415 in the error format.
"""
import json
import re

from marshmallow import RAISE
from webargs import core
from webargs.flaskparser import FlaskParser, abort

MAX_JSON_DEPTH = 32


def _no_duplicate_keys(pairs):
    obj = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _no_constants(name):
    raise ValueError(f"{name} is not a JSON number")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_values(value, limit):
    """Raise ValueError for nesting deeper than `limit`, or for a string (or
    key) holding a lone surrogate: `"\\ud800"` is valid JSON text but no
    Unicode character, and could be neither stored nor sent back."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise ValueError("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), "
                                 "which is not a Unicode character")
        elif isinstance(item, (dict, list)):
            if depth > limit:
                raise ValueError(f"nested deeper than {limit} levels")
            if isinstance(item, dict):
                stack.extend((key, depth) for key in item)
                stack.extend((child, depth + 1) for child in item.values())
            else:
                stack.extend((child, depth + 1) for child in item)


def parse_json_body(data):
    """Strict JSON: UTF-8, no duplicate keys, no NaN/Infinity, bounded depth.

    Raises ValueError with a message fit for a client.
    """
    try:
        text = data.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ValueError(f"the body is not UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(text, object_pairs_hook=_no_duplicate_keys,
                           parse_constant=_no_constants)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH} levels") from None
    # ValueError from the hooks, or from integers too long to convert, passes up
    if not isinstance(data, bytes) or _may_break_rules(text):
        _check_values(value, MAX_JSON_DEPTH)
    return value


def _may_break_rules(text):
    """Whether the parsed `text` may be too deep or hold a lone surrogate
    (else _check_values's walk is spared: half the parse of a typical
    scan). Nesting needs an opening bracket per level, so a text with no
    more than MAX_JSON_DEPTH of them is shallow enough; a lone surrogate
    comes only from a `\\u` escape in text decoded from UTF-8 (which
    cannot carry one)."""
    return "\\u" in text or text.count("{") + text.count("[") > MAX_JSON_DEPTH


class StrictParser(FlaskParser):
    DEFAULT_UNKNOWN_BY_LOCATION = {**FlaskParser.DEFAULT_UNKNOWN_BY_LOCATION,
                                   "query": RAISE, "querystring": RAISE}

    def load_querystring(self, req, schema):
        """The query, where a parameter given twice is a 422 at `query.<name>`
        (webargs would silently take the first)."""
        repeated = {name: ["Given more than once; give it once."]
                    for name, values in req.args.lists() if len(values) > 1}
        if repeated:
            abort(422, messages={"query": repeated})
        return super().load_querystring(req, schema)

    def _raw_load_json(self, req):
        body = req.get_data(cache=True)
        if not body:
            return core.missing  # an empty body is an empty object
        if not core.is_json(req.mimetype):
            abort(415, messages={"headers": {"content-type": [
                "The body must be JSON (Content-Type: application/json)."]}})
        try:
            return parse_json_body(body)
        except ValueError as exc:
            abort(400, messages={"json": [str(exc)]})

