"""The change feed's schemas (schemas/events.py): an event's changes dumped
as `{from, to}`; the feed's arguments made for the events' orderings: `after`
an event id, `wait` 1 to MAX_WAIT seconds, the filter's fields described as
the feed's own."""
import pytest
from marshmallow import ValidationError

from inventory.resources.events.spec import SPEC
from schemas.events import MAX_WAIT, EventSchema, event_list_args


@pytest.fixture
def args():
    return event_list_args(SPEC.orderings)()


def test_an_events_changes_are_from_and_to():
    dumped = EventSchema(nested=True).dump({
        "id": "evt_0000000000000001", "type": "kubecluster.updated",
        "changes": {"version": {"from": "1.30.1", "to": None}}})
    assert dumped["changes"] == {"version": {"from": "1.30.1", "to": None}}


def test_after_is_an_event_id(args):
    assert args.load({"after": "evt_00000000000000af"}) == {"after": "evt_00000000000000af"}
    for bad in ("evt_1", "evt_00000000000000AG", "00000000000000af", "evt_00000000000000af0"):
        with pytest.raises(ValidationError) as refused:
            args.load({"after": bad})
        assert refused.value.messages["after"] == [
            "Must be an event id (evt_ followed by 16 hex digits)."]


def test_wait_is_one_to_max_wait_seconds(args):
    assert args.load({"wait": "1"}) == {"wait": 1}
    assert args.load({"wait": str(MAX_WAIT)}) == {"wait": MAX_WAIT}
    for bad in ("0", str(MAX_WAIT + 1), "soon"):
        with pytest.raises(ValidationError):
            args.load({"wait": bad})


def test_the_feeds_arguments_are_made_for_its_orderings(args):
    order_by = args.fields["order_by"].metadata["description"]
    assert "`id`" in order_by and "`occurred_on`" in order_by
    described = args.fields["filter"].metadata["description"]
    assert "`changed`" in described and "the listed resource's fields" not in described
    assert args.load({"limit": "5", "format": "csv", "filter": 'type="kubecluster.*"'}) == {
        "limit": 5, "format_": "csv", "filter": 'type="kubecluster.*"'}
