"""`group_by` of a summary (inventory/core/grouping.py): one to three
distinct fields, declared or `labels.<key>`."""
import pytest

from inventory.core.errors import BadGrouping
from inventory.core.grouping import MAX_FIELDS, MAX_GROUP_BY, label_key, parse

FIELDS = ("environment", "version", "support.status")


def test_declared_fields_and_labels_in_the_order_given():
    assert parse("version, environment", FIELDS) == ("version", "environment")
    assert parse('labels.team,labels."app.kubernetes.io/name"', FIELDS) == (
        "labels.team", 'labels."app.kubernetes.io/name"')


@pytest.mark.parametrize("text, says", [
    ("", "an empty entry"), ("environment,", "an empty entry"),
    ("colour", "cannot count by `colour`"), ("environment, environment", "more than once"),
    ("labels.a.b", "A label is grouped by"), ("environment version", "is not one"),
    (",".join(FIELDS + ("labels.x",)), f"At most {MAX_FIELDS} fields"),
    ("x" * (MAX_GROUP_BY + 1), f"At most {MAX_GROUP_BY} characters")])
def test_what_is_refused(text, says):
    with pytest.raises(BadGrouping, match=says):
        parse(text, FIELDS)


def test_a_label_key_back_from_a_field_name():
    assert label_key('labels."app.kubernetes.io/name"') == "app.kubernetes.io/name"
    assert label_key("labels.team") == "team"
    assert label_key("environment") is None
