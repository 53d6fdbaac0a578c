"""The change feed: every accepted change as an event, by `evt_` id."""
import re

from inventory.core.spec import PathKey, ResourceSpec

ID_RE = re.compile(r"^evt_[0-9a-f]{16}$")
ID_LENGTH = 4 + 16

SPEC = ResourceSpec(
    name="events", kind="event", path="events",
    path_key=PathKey("event", "The event's id.", "an event id (evt_ followed by 16 hex digits)",
                     (ID_RE,), ID_LENGTH, "evt_0000000000000001"),
    event_kind=None,
)
