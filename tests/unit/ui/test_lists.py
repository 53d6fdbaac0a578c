"""A console list page's query as the API reads its list: the links a
Listing makes (each keeps the others' parameters). (The first bounded page
of a list, read in a caller's scope, is tested through the overview and a
cluster's history: tests/api/test_console_pages.py.)"""
from urllib.parse import parse_qs, urlsplit

from inventory.ui.lists import Listing


def _query(link):
    return parse_qs(urlsplit(link).query)


def test_a_listings_links_keep_its_query_but_what_they_change():
    listing = Listing("/ui/clusters", {"filter": 'a="b"', "order_by": "name", "limit": "5",
                                       "continue": "tok"})
    listing.next_token = "next"
    assert _query(listing.next_link()) == {"filter": ['a="b"'], "order_by": ["name"],
                                           "limit": ["5"], "continue": ["next"]}
    assert "continue" not in _query(listing.first_link())
    assert _query(listing.sort_link("name"))["order_by"] == ["name desc"]  # reversed
    assert "continue" not in _query(listing.sort_link("version"))
    assert _query(listing.export_link("/ui/clusters.csv")) == {"filter": ['a="b"'],
                                                               "order_by": ["name"]}


def test_a_listing_says_how_it_is_sorted():
    listing = Listing("/ui/x", {"order_by": "name  desc"})
    assert listing.sorted_by("name") == "descending" and listing.sorted_by("title") is None
    assert Listing("/ui/x", {}).next_link() is None
    assert Listing("/ui/x", {}).link() == "/ui/x"
