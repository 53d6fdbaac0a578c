"""A JSON value a record holds as the text it is stored as.

A cluster's readiness checks (about 1.4 KB of JSON) are stored as one
string and shown on every page of clusters: parsing them into objects to
serialise them again was a fifth of a page's time. A record holds them as
`JSONText` instead: an answer embeds the text as it is (the JSON
provider, as an `orjson.Fragment`), and whoever reads the value (the
console, a CSV cell, a test) gets it parsed, once, on first use.

It is never stored as itself: an event keeps its record as JSON text, the
checks' text written in it as it is (`embedded`, as answers do); where a
record becomes a document, it is parsed (`plain`). It is not mutable: its parsed value
is handed out as a copy."""
import copy

import orjson


class JSONText:
    """`text`, a JSON document, readable as the value it holds."""

    __slots__ = ("text", "_parsed")

    def __init__(self, text):
        self.text = text
        self._parsed = None

    def value(self):
        """The value, parsed (a new copy each call: changing it changes nothing here)."""
        return orjson.loads(self.text)

    def _read(self):
        if self._parsed is None:
            self._parsed = orjson.loads(self.text)
        return self._parsed

    # Read as the value it holds (a list or an object): iterated, indexed, compared.
    def __iter__(self):
        return iter(copy.deepcopy(self._read()))

    def __len__(self):
        return len(self._read())

    def __bool__(self):
        return bool(self._read())

    def __getitem__(self, index):
        return copy.deepcopy(self._read()[index])

    def __eq__(self, other):
        if isinstance(other, JSONText):
            return self.text == other.text or self._read() == other._read()
        return self._read() == other

    __hash__ = None  # as the list or object it holds

    def __repr__(self):
        return f"JSONText({self.text!r})"

    def __deepcopy__(self, memo):
        return self  # immutable

    def __copy__(self):
        return self


def embedded(value):
    """orjson's `default` for JSONText: its text, written as it is (an
    `orjson.Fragment`); TypeError for anything else, as orjson wants."""
    if value.__class__ is JSONText:
        return orjson.Fragment(value.text)
    raise TypeError(f"{type(value).__name__} is not JSON")


def plain(value):
    """`value` (a record's field) with every JSONText in it parsed: for
    what stores or re-encodes a record. `value` itself when it holds none."""
    if value.__class__ is JSONText:
        return value.value()
    if isinstance(value, dict):
        if not any(_holds(inner) for inner in value.values()):
            return value
        return {key: plain(inner) for key, inner in value.items()}
    if isinstance(value, list):
        if not any(_holds(inner) for inner in value):
            return value
        return [plain(inner) for inner in value]
    return value


def _holds(value):
    if value.__class__ is JSONText:
        return True
    if isinstance(value, dict):
        return any(_holds(inner) for inner in value.values())
    if isinstance(value, list):
        return any(_holds(inner) for inner in value)
    return False
