"""List pages (inventory/http/lists.py): a page request from the query, and
its tokens bound to the list, the caller's scope, the filter and the order."""
import pytest
from flask import g

from inventory.core.errors import BadContinuation
from inventory.core.ordering import Orderings
from inventory.http.auth import Principal
from inventory.http.lists import PageTokens, page_request
from inventory.store.pages import Page

ORDERINGS = Orderings.of("name", "version")


@pytest.fixture
def request_context(app):
    """A request of an unscoped caller (what the gate's auth layer sets)."""
    with app.test_request_context("/"):
        g.principal = Principal("tok_test", "test", "admin")
        yield


def test_a_page_request_from_the_query(request_context):
    request, pages = page_request("kubeclusters", {"limit": 0, "filter": 'name="a"',
                                                   "order_by": "version desc"}, ORDERINGS)
    assert request.limit == 20  # 0 means the default, never "no limit"
    assert request.backwards is True and request.ordering.text == "version"
    assert pages.list_key.startswith("kubeclusters@") and pages.order == "version desc"
    assert pages.now is None  # no relative time: nothing to carry


def test_a_relative_time_is_resolved_once_and_carried_by_the_token(request_context):
    args = {"filter": 'created_on>="-PT1H"'}
    _, pages = page_request("kubeclusters", args, ORDERINGS)
    assert pages.now is not None
    envelope = pages.envelope(Page(records=[{"name": "a"}], next_after="a"))
    token = envelope["pagination"]["continue_"]
    again, _ = page_request("kubeclusters", {**args, "continue_": token}, ORDERINGS)
    assert again.after == "a" and again.now == pages.now


def test_a_token_is_good_for_its_own_pages_only(request_context):
    _, pages = page_request("kubeclusters", {}, ORDERINGS)
    token = pages.envelope(Page(records=[], next_after="k"))["pagination"]["continue_"]
    assert pages.bound(token) == ("k", None)
    with pytest.raises(BadContinuation):
        PageTokens("kubeplatforms@*", None).bound(token)
    with pytest.raises(BadContinuation):
        page_request("kubeclusters", {"continue_": token, "order_by": "name"}, ORDERINGS)
    assert pages.envelope(Page(records=[], next_after=None))["pagination"]["continue_"] == ""
