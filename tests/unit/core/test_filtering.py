"""The filter's grammar (inventory/core/filtering.py, AIP-160's subset):
the tree a filter parses to, its bounds, relative times, and each mistake
told with its column. (Label keys in field paths: test_labels.py.)"""
from datetime import timedelta

import pytest

from inventory.core.errors import BadFilter
from inventory.core.filtering import (
    MAX_BACK_DAYS,
    MAX_DEPTH,
    MAX_LENGTH,
    MAX_TERMS,
    PRESENT,
    Comparison,
    Logical,
    Not,
    duration_back,
    has_relative_time,
    parse,
)


def test_a_comparison_and_its_values():
    tree = parse('environment="production"')
    assert isinstance(tree, Comparison)
    assert (tree.field, tree.op, tree.value, tree.prefix, tree.position) == (
        "environment", "=", "production", False, 1)
    assert parse("nodes>=3").value == 3 and parse("ratio<0.5").value == 0.5
    assert parse('name="prod*"').prefix is True
    assert parse("last_scanned_on:*").value is PRESENT


def test_and_binds_tighter_than_or_and_not_negates():
    tree = parse('a="1" OR b="2" AND NOT c="3"')
    assert isinstance(tree, Logical) and tree.op == "OR"
    right = tree.operands[1]
    assert isinstance(right, Logical) and right.op == "AND"
    assert isinstance(right.operands[1], Not)
    grouped = parse('(a="1" OR b="2") AND c="3"')
    assert grouped.op == "AND" and grouped.operands[0].op == "OR"


@pytest.mark.parametrize("text, says", [
    ("", "the filter is empty"),
    ('a="1" AND', "something must follow"),
    ('(a="1"', "not closed"),
    ("a", "an operator"),
    ("a=", "a value must follow"),
    ("a=*", "a bare *"),
    ('a="1" b="2"', "unexpected"),
    ("a=\x01", "unexpected character"),
])
def test_each_mistake_is_told(text, says):
    with pytest.raises(BadFilter, match=says):
        parse(text)


def test_the_column_of_a_mistake_is_given():
    with pytest.raises(BadFilter) as refused:
        parse('a="1" AND b')
    assert "at column 11" in refused.value.message


def test_the_bounds():
    assert parse(" OR ".join(['a="1"'] * MAX_TERMS))
    with pytest.raises(BadFilter, match=f"more than {MAX_TERMS}"):
        parse(" OR ".join(['a="1"'] * (MAX_TERMS + 1)))
    with pytest.raises(BadFilter, match=f"deeper than {MAX_DEPTH}"):
        parse("(" * MAX_DEPTH + 'a="1"' + ")" * MAX_DEPTH)
    with pytest.raises(BadFilter, match=f"longer than {MAX_LENGTH}"):
        parse('a="' + "x" * MAX_LENGTH + '"')


def test_a_relative_time_and_its_bound():
    assert duration_back("-PT1H") == timedelta(hours=1)
    assert duration_back("-P1W2DT3H4M5S") == timedelta(weeks=1, days=2, hours=3, minutes=4,
                                                        seconds=5)
    for not_one in ("PT1H", "-P", "-PT", "-P1Y", 5):
        assert duration_back(not_one) is None, not_one
    with pytest.raises(ValueError, match=str(MAX_BACK_DAYS)):
        duration_back(f"-P{MAX_BACK_DAYS + 1}D")


def test_whether_a_tree_holds_a_relative_time():
    assert has_relative_time(parse('a="x" OR NOT created_on>="-P1D"'))
    assert not has_relative_time(parse('a="x" OR created_on>="2026-01-01"'))
    assert not has_relative_time(parse('name="-P*"'))  # a prefix, not a time
