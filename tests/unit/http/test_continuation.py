"""Continuation tokens (inventory/http/continuation.py): signed, opaque,
bound to one list, filter and order."""
import pytest

from inventory.core.errors import BadContinuation
from inventory.http.continuation import ContinuationTokens

TOKENS = ContinuationTokens(lambda: "k" * 64)


def test_a_token_gives_back_where_it_stopped_and_its_instant():
    token = TOKENS.encode("kubeclusters", 'a="1"', "c_9", "name", now="2026-01-01T00:00:00.000Z")
    assert TOKENS.decode(token, "kubeclusters", 'a="1"', "name") == (
        "c_9", "2026-01-01T00:00:00.000Z")
    assert TOKENS.decode(TOKENS.encode("orgs", None, "o_1"), "orgs", "") == ("o_1", None)


@pytest.mark.parametrize("list_key, filter_text, order, says", [
    ("organizations", 'a="1"', "name", "another list"),
    ("kubeclusters", 'a="2"', "name", "another filter"),
    ("kubeclusters", 'a="1"', "", "with order_by='name'"),
])
def test_a_token_is_refused_on_another_list_filter_or_order(list_key, filter_text, order, says):
    token = TOKENS.encode("kubeclusters", 'a="1"', "c_9", "name")
    with pytest.raises(BadContinuation, match=says):
        TOKENS.decode(token, list_key, filter_text, order)


def test_a_forged_or_foreign_token_is_refused():
    token = TOKENS.encode("kubeclusters", None, "c_9")
    other = ContinuationTokens(lambda: "o" * 64).encode("kubeclusters", None, "c_9")
    for bad in (token[:-2] + "xx", other, "nonsense", ""):
        with pytest.raises(BadContinuation, match="Not a continuation token"):
            TOKENS.decode(bad, "kubeclusters", None)
