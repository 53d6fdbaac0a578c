"""`order_by` (inventory/core/ordering.py): the grammar, and a list's
declared orderings, each served forwards and reversed."""
import pytest

from inventory.core.errors import BadOrdering
from inventory.core.ordering import MAX_ORDER_BY, Ordering, Orderings, parse


def test_the_grammar():
    assert parse("environment, version desc") == Ordering(
        (("environment", False), ("version", True)))
    assert parse("name asc").text == "name"
    assert parse("a desc, b").reversed().text == "a, b desc"


@pytest.mark.parametrize("text, says", [
    ("a,,b", "an empty entry"), ("a down", "followed only by `desc`"),
    ("a, a desc", "more than once"), ("a\tdesc", "Only field names"),
    ("x" * (MAX_ORDER_BY + 1), f"At most {MAX_ORDER_BY}")])
def test_what_the_grammar_refuses(text, says):
    with pytest.raises(BadOrdering, match=says.replace("(", r"\(")):
        parse(text)


LIST = Orderings.of("name", "version", "environment, version")


def test_a_declared_ordering_is_served_forwards_and_reversed():
    assert LIST.resolve("version") == (parse("version"), False)
    assert LIST.resolve("environment desc, version desc") == (parse("environment, version"), True)


def test_an_undeclared_ordering_is_refused_with_those_served():
    with pytest.raises(BadOrdering) as refused:
        LIST.resolve("environment, version desc")  # its fields, not its directions
    assert "does not serve `environment, version desc`" in refused.value.detail
    assert "`name`, `version`; and `environment, version`" in refused.value.detail
    with pytest.raises(BadOrdering, match="cannot be ordered by `colour`"):
        LIST.resolve("colour")


def test_a_label_is_told_why_lists_are_not_ordered_by_labels():
    with pytest.raises(BadOrdering, match="Lists are not ordered by labels"):
        LIST.resolve('labels."app.kubernetes.io/name"')


def test_fields_and_examples():
    assert LIST.fields == ["name", "version", "environment"]
    assert LIST.examples() == ["name", "environment desc, version desc", "environment, version"]
