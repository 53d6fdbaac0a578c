"""How a declared cell shows its value: each kind's HTML, every piece of
the value escaped, a missing value as its column says, and a link."""
import pytest

from inventory.ui.cells import KINDS, SPEAKS_OF_NONE, cell, organization, row, status
from inventory.ui.declared import Column, of


def shown(kind, value, **column):
    return str(cell(Column("X", lambda record: value, kind, **column), {}))


def test_text_and_code_are_escaped():
    assert shown("text", "<b>&") == "&lt;b&gt;&amp;"
    assert shown("code", "<i>") == "<code>&lt;i&gt;</code>"
    assert shown("prose", "a\nb") == "a\nb"


def test_a_missing_value_shows_as_its_column_says():
    assert shown("text", None) == '<span class="none">—</span>'
    assert shown("code", "", missing="all events") == '<span class="none">all events</span>'
    assert shown("when", None) == '<span class="none">never</span>'
    assert shown("on_day", None) == '<span class="none">not known</span>'


@pytest.mark.parametrize("kind", sorted(set(KINDS) - SPEAKS_OF_NONE))
def test_every_kind_that_does_not_speak_of_none_shows_missing(kind):
    assert shown(kind, None, missing="<none>") == '<span class="none">&lt;none&gt;</span>'


def test_times_show_in_utc_with_their_age():
    assert '<time datetime="2025-11-22T08:26:40Z">2025-11-22 08:26 UTC</time>' in shown(
        "when", 1763800000)
    by = shown("when_by", ("2025-11-22T08:26:40Z", "<ci>"))
    assert by.startswith('<time datetime="2025-11-22T08:26:40Z">') and by.endswith(" by &lt;ci&gt;")


def test_a_status_is_a_badge_and_support_says_until_when():
    assert str(status("ending")) == '<span class="status ending">ending</span>'
    assert str(status('x" onclick="y')).count('"') == 2  # the value cannot leave its attribute
    support = shown("support", {"status": "ending", "ends_on": "2026-12-02"})
    assert support.startswith('<span class="status ending">ending</span> until <time ')
    assert shown("support", {"status": "unknown", "ends_on": None}) == \
        '<span class="status unknown">unknown</span>'


def test_a_webhooks_state_says_why_it_is_inactive():
    assert shown("active", {"active": True}) == "active"
    assert shown("active", {"active": False, "inactive_reason": "<410>"}) == \
        "<strong>inactive</strong>: &lt;410&gt;"


def test_an_events_changes_each_from_old_to_new():
    html = shown("changes", {"title": {"from": None, "to": "<New>"},
                             "labels": {"from": {}, "to": {"a": "b"}}})
    assert "<div><code>title</code>: (none) → &lt;New&gt;</div>" in html
    assert '<div><code>labels</code>: {} → {&#34;a&#34;: &#34;b&#34;}</div>' in html


def test_no_organization_shows_as_the_column_says(app):
    with app.test_request_context():
        assert str(organization(None)) == '<span class="none">all</span>'
        assert shown("organization", None, missing="fleet-wide") == \
            '<span class="none">fleet-wide</span>'


def test_a_linked_cell_is_a_link_around_its_value():
    column = Column("Name", of("name"), "code", link=lambda record: f"/ui/x/{record['name']}")
    assert str(cell(column, {"name": "a&b"})) == '<a href="/ui/x/a&amp;b"><code>a&amp;b</code></a>'


def test_a_rows_first_cell_is_its_header():
    columns = (Column("Name", of("name")), Column("Title", of("title")))
    assert str(row(columns, {"name": "a", "title": None})) == \
        '<th scope="row">a</th><td><span class="none">—</span></td>'
