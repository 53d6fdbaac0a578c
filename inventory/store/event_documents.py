"""An event as the feed stores it, and as the API shows it: made from the
record as the API showed it (`object`, kept as one JSON string), who made
the change (`acting_as`) and what it changed; read back with its slot as its
id. The feed's order and reads: inventory.store.events."""
import contextlib
import contextvars

import orjson

from inventory.store.document_keys import api_document, stored_document
from inventory.store.stored_json import embedded, parsed

ID_PREFIX = "evt_"
# An event whose object or changes hold escaped keys (inventory.store.document_keys)
ESCAPED = "keys_escaped"
# An event's `object` (the record as the API showed it), as one JSON string:
# read whole and never queried, it costs the embedded store one object, not
# the dozens (a cluster's readiness and what it observed) that the cyclic
# garbage collector would walk in every full collection for as long as the
# event is kept (docs/design/events.md). Events stored before keep `object`.
OBJECT = "_object"

_actor = contextvars.ContextVar("inventory_actor", default="system")


def acting_as(name):
    """Name the principal the events of this request (context) are by."""
    _actor.set(name)


@contextlib.contextmanager
def acting(name):
    """The events made inside are by `name`, whoever the request's caller
    is: a change the service makes itself (a rollout's stage whose turn
    came) is by `system`, even when a reader's read brought it."""
    token = _actor.set(name)
    try:
        yield
    finally:
        _actor.reset(token)


def event_document(kind, action, key, subject, record, organization, changes=None):
    """A new event of `record` (as an answer shows it: `to_answer`) for an outbox."""
    # the record's maps (labels) may hold keys a document cannot (`.`):
    # stored escaped, as their records are (inventory.store.document_keys),
    # and the event says so, so that reading the others costs nothing
    # its `occurred_on` is stamped as it takes its place in the feed (append)
    event = {"key": key, "type": f"{kind}.{action}", "actor": _actor.get(),
             "subject": subject}
    escaped = False
    try:  # a JSON string's keys need no escape
        event[OBJECT] = orjson.dumps(record, default=embedded).decode()
    except orjson.JSONEncodeError:  # beyond JSON's integers (64 bits): as a document
        record = dict(parsed(record))
        event["object"] = stored_document(record)
        escaped = event["object"] is not record
    if organization is not None:
        event["organization"] = organization
    if changes is not None:  # stored as a list: its paths are not document keys
        event["changes"] = []
        for path, change in changes.items():
            before, after = stored_document(change["from"]), stored_document(change["to"])
            escaped = escaped or before is not change["from"] or after is not change["to"]
            event["changes"].append({"field": path, "from": before, "to": after})
    if escaped:
        event[ESCAPED] = True
    return event


def _as_is(value):
    return value


def event_to_api(doc):
    """The event a feed document holds, as the API shows it."""
    event = {"id": ID_PREFIX + doc["_id"]}
    event.update((k, v) for k, v in doc.items()
                 if k not in ("_id", "key", "at", ESCAPED, OBJECT))
    unescaped = api_document if doc.get(ESCAPED) else _as_is
    if OBJECT in doc:
        event["object"] = orjson.loads(doc[OBJECT])
    elif "object" in event:
        event["object"] = unescaped(event["object"])
    if isinstance(event.get("changes"), list):  # {dotted path: {"from", "to"}} in the API
        event["changes"] = {change["field"]: {"from": unescaped(change["from"]),
                                              "to": unescaped(change["to"])}
                            for change in event["changes"]}
    return event
