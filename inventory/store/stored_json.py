"""A field a record keeps as the JSON text it is stored as (a cluster's
readiness checks, about 1.4 KB), handed as that text to an answer that
embeds it as it is: parsing it into objects to serialise them again was a
fifth of a page's time. Only records read for a JSON answer hold one (a
list's page, an integration's clusters: `PageRequest.answered`,
`to_answer`; the JSON provider embeds it, inventory.http.json_provider);
every other reader gets the field parsed, as a plain value.

Opaque on purpose: it is no list and no object, so no reader can mistake
it for the value it holds."""
import orjson


class StoredJSON:
    """`text`, a JSON document, to be embedded in an answer as it is."""

    __slots__ = ("text",)

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"StoredJSON({self.text!r})"


def embedded(value):
    """orjson's `default` for StoredJSON: its text, written as it is (an
    `orjson.Fragment`); TypeError for anything else, as orjson wants."""
    if value.__class__ is StoredJSON:
        return orjson.Fragment(value.text)
    raise TypeError(f"{type(value).__name__} is not JSON")


def parsed(value):
    """`value` (a record or a field of one) with every StoredJSON in it
    parsed: for what cannot embed the text. `value` itself when it holds none."""
    if value.__class__ is StoredJSON:
        return orjson.loads(value.text)
    if isinstance(value, dict):
        if not any(_holds(inner) for inner in value.values()):
            return value
        return {key: parsed(inner) for key, inner in value.items()}
    if isinstance(value, list):
        if not any(_holds(inner) for inner in value):
            return value
        return [parsed(inner) for inner in value]
    return value


def _holds(value):
    if value.__class__ is StoredJSON:
        return True
    if isinstance(value, dict):
        return any(_holds(inner) for inner in value.values())
    if isinstance(value, list):
        return any(_holds(inner) for inner in value)
    return False
