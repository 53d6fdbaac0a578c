"""The change feed: every accepted change as an event, by `evt_` id."""
from inventory.core.ids import EVENT_ID_LENGTH, EVENT_ID_RE
from inventory.core.ordering import Orderings
from inventory.core.spec import PathKey, ResourceSpec

SPEC = ResourceSpec(
    name="events", kind="event", path="events",
    path_key=PathKey("event", "The event's id.", "an event id (evt_ followed by 16 hex digits)",
                     (EVENT_ID_RE,), EVENT_ID_LENGTH, "evt_0000000000000001"),
    event_kind=None,
    # Both are the feed's order, the order ids compare in; `desc`: newest
    # first. `occurred_on` is the contract's name for it: one process's times
    # never go back along the feed's order; between processes, whose clocks
    # differ, the feed's order decides (docs/events.md).
    orderings=Orderings.of("id", "occurred_on"),
)
