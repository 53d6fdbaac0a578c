"""The console's page helpers on their own: where `next=` may lead, and
how a time's age reads."""
from datetime import datetime, timedelta, timezone

import pytest

from inventory.ui.pages import OVERVIEW, age, safe_next


@pytest.mark.parametrize("target", [
    "/ui", "/ui/", "/ui/clusters", '/ui/clusters?filter=environment%3D"x"&limit=5',
    "/ui/clusters/payments/edit", "/ui/clusters?filter=a%2Fb",
])
def test_a_console_path_is_followed(target):
    assert safe_next(target) == target


@pytest.mark.parametrize("target", [
    None, "", "/", "//evil.com", "///evil.com", "//evil.com/ui/", "https://evil", "http:/ui/",
    "https://evil/ui/", "/\\evil.com", "\\\\evil.com", "/ui\\..\\x", "/ui/\\evil",
    "/ui/../x", "/ui/./clusters", "/ui/%2e%2e/x", "/ui/%2E%2E/admin", "/ui/%2f%2fevil.com",
    "/ui/%5cevil", "/ui//evil.com", "/ui/\t/x", "/ui/\r\nSet-Cookie: x", "/ui/%0d%0ax",
    "javascript:alert(1)", "/uix", "/x", "ui/", "/ui" + "/a" * 1200, 42,
])
def test_anything_else_leads_to_the_overview(target):
    assert safe_next(target) == OVERVIEW


def test_an_age_reads_roughly_and_both_ways():
    now = datetime(2026, 11, 25, 12, 0, tzinfo=timezone.utc)
    assert age(now - timedelta(seconds=20), now) == "just now"
    assert age(now - timedelta(minutes=1), now) == "1 minute ago"
    assert age(now - timedelta(hours=5), now) == "5 hours ago"
    assert age(now - timedelta(days=3), now) == "3 days ago"
    assert age(now + timedelta(days=65), now) == "in 2 months"
    assert age(now - timedelta(days=800), now) == "2 years ago"
