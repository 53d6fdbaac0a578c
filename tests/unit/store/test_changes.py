"""What an update changed, as its event says it (inventory/store/changes.py)."""
from inventory.store.changes import changes_between


def test_only_the_leaves_that_differ_by_their_dotted_path():
    before = {"title": "a", "labels": {"team": "x", "app.kubernetes.io/name": "y"},
              "support": {"status": "supported"}}
    after = {"title": "a", "labels": {"team": "z", "app.kubernetes.io/name": "y", "new": "1"},
             "support": {"status": "ending"}}
    assert changes_between(before, after) == {
        "labels.new": {"from": None, "to": "1"},
        "labels.team": {"from": "x", "to": "z"},
        "support.status": {"from": "supported", "to": "ending"}}
    changed = changes_between({"labels": {"a.b/c": "1"}}, {"labels": {"a.b/c": "2"}})
    assert list(changed) == ['labels."a.b/c"']  # a segment with `.` or `/` is quoted


def test_audit_and_computed_fields_are_left_out_and_nothing_is_none():
    before = {"title": "a", "last_modified_on": "1", "last_modified_by": "x",
              "readiness": {"status": "passing", "checks": [1]}, "support": {"status": "s"}}
    after = {**before, "last_modified_on": "2", "last_modified_by": "y",
             "readiness": {"status": "error", "checks": [2]}, "support": {"status": "t"}}
    assert changes_between(before, after, ("support", "readiness.checks")) == {
        "readiness.status": {"from": "passing", "to": "error"}}
    assert changes_between(before, {**before, "last_modified_on": "3"}) is None
