"""Server-made ids and timestamps (inventory/core/ids.py): a slug's form,
the `<prefix>_<UUID>` form, version 7 UUIDs that sort by creation, and
fixed-width RFC 3339 times that sort as strings."""
import uuid
from datetime import datetime, timedelta, timezone

from inventory.core import ids
from inventory.core.ids import SLUG_RE, IdForm, new_id, rfc3339, uuid7


def test_a_slug_is_a_dns_label():
    for good in ("a", "a1", "prod-eu-1", "x" * ids.MAX_SLUG):
        assert SLUG_RE.match(good), good
    for bad in ("", "-a", "a-", "A", "a_b", "a.b", "x" * (ids.MAX_SLUG + 1)):
        assert not SLUG_RE.match(bad), bad


def test_an_id_form_matches_its_own_ids_only():
    form = IdForm("org")
    made = new_id("org")
    assert form.pattern.match(made) and len(made) == form.max_length
    assert form.pattern.match(form.example)
    assert not form.pattern.match(new_id("tok"))
    assert not form.pattern.match(made.upper())
    assert form.described == "org_ followed by a UUID"


def test_uuid7_is_version_7_and_increases_within_a_millisecond():
    made = [uuid7() for _ in range(5000)]  # many share a millisecond
    assert all(u.version == 7 and u.variant == uuid.RFC_4122 for u in made)
    assert made == sorted(made, key=lambda u: u.int) and len(set(made)) == len(made)


def test_uuid7_carries_the_time_it_was_made_in_its_first_48_bits():
    before = int(datetime.now(timezone.utc).timestamp() * 1000)
    made = uuid7()
    after = int(datetime.now(timezone.utc).timestamp() * 1000)
    # not after: another test in this process may have made the clock borrow ahead
    assert before <= made.int >> 80 and after > 0


def test_rfc3339_is_utc_with_milliseconds_of_fixed_width():
    moment = datetime(2026, 1, 2, 3, 4, 5, 7000, tzinfo=timezone(timedelta(hours=2)))
    assert rfc3339(moment) == "2026-01-02T01:04:05.007Z"
    times = [datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=n * 997)
             for n in range(50)]
    assert sorted(rfc3339(t) for t in reversed(times)) == [rfc3339(t) for t in times]
    assert ids.now_rfc3339().endswith("Z") and len(ids.now_rfc3339()) == 24
