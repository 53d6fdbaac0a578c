"""The actions on a record (inventory/http/actions.py; made-up gadgets, not
to meet the app's own routes): an action's URL is
its own, with its methods and OPTIONS, whatever the record's route takes."""
from inventory.http import actions


def test_an_actions_url_has_its_methods_and_a_records_has_none():
    actions.declare("/gadgets/<gadget>:approve", ["POST"])
    actions.declare("/gadgets/<gadget>", ["GET", "PATCH", "DELETE"])  # not an action
    assert actions.methods_of("/gadgets/g1:approve") == {"POST", "OPTIONS"}
    assert actions.methods_of("/gadgets/g1") is None
    assert actions.methods_of("/gadgets/g1/x:approve") is None  # a key holds no `/`
    assert actions.methods_of("/gadgets/g1:approveX") is None


def test_a_typed_parameter_is_matched_as_any_key():
    actions.declare("/things/<string:thing>:pause", ["POST"])
    assert actions.methods_of("/things/t-9:pause") == {"POST", "OPTIONS"}
