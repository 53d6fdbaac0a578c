"""The change feed: every accepted change as an event, by `evt_` id."""
import re

from inventory.core.ordering import Orderings
from inventory.core.spec import PathKey, ResourceSpec

ID_RE = re.compile(r"^evt_[0-9a-f]{16}$")
ID_LENGTH = 4 + 16

SPEC = ResourceSpec(
    name="events", kind="event", path="events",
    path_key=PathKey("event", "The event's id.", "an event id (evt_ followed by 16 hex digits)",
                     (ID_RE,), ID_LENGTH, "evt_0000000000000001"),
    event_kind=None,
    # Both are the feed's order, the order ids compare in; `desc`: newest
    # first. `occurred_on` is the contract's name for it: the times follow
    # the feed's order but for writers whose clocks differ by a millisecond,
    # where the feed's order decides (docs/events.md).
    orderings=Orderings.of("id", "occurred_on"),
)
