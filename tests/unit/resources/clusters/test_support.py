"""The clusters' computed support fields in filters
(inventory/resources/clusters/support.py): `support.status`,
`support.ends_on` and `support.all_ends_on` compiled, for today, into
queries of version keys per distribution that find exactly the clusters
whose computed support (as a record shows it) passes the comparison; days
absolute or relative to today; every other comparison a BadFilter."""
from datetime import date, datetime, timedelta, timezone

import pytest
import time_machine

from inventory.core.errors import BadFilter
from inventory.core.filtering import parse
from inventory.core.lifecycle import STATUSES
from inventory.resources.clusters.support import (
    SUPPORT_FILTERS,
    clusters_where,
    support_date_query,
    support_status_query,
)
from tests.support.stores import PLATFORM

DAY = date(2026, 6, 1)
VERSIONS = ("1.25.3", "1.28.1", "1.29.4", "1.30.2", "1.31.2", "1.32.1", "1.33.0", "1.34.1",
            "1.99.0")


@pytest.fixture
def fleet(store):
    """Each version above on an EKS platform and on an upstream one, on DAY:
    {name: its record's `support`}."""
    with time_machine.travel(datetime(2026, 6, 1, 12, tzinfo=timezone.utc), tick=False):
        org = store.organizations.create({"title": "Acme", "description": ""}, "tester")
        store.platforms.create({"name": "eks", "organization": org["id"], **PLATFORM}, "t")
        store.platforms.create({"name": "up", "organization": org["id"], **PLATFORM,
                                "control_plane": {"provider": "openshift"}}, "t")
        for platform in ("eks", "up"):
            for version in VERSIONS:
                store.clusters.create({"name": f"{platform}-{version.replace('.', '-')}",
                                       "platform": platform, "environment": "dev",
                                       "version": version, "labels": {}}, "t")
        yield {record["name"]: record["support"] for record in (
            store.clusters.get(doc["_id"]) for doc in store.clusters.collection.find({}))}


def _found(store, query):
    return {doc["_id"] for doc in store.clusters.collection.find(query)}


def _where(support, test):
    return {name for name, fields in support.items() if test(fields)}


def _compiled(text):
    node = parse(text)
    return SUPPORT_FILTERS[node.field](node)


def test_a_status_finds_exactly_the_clusters_with_that_status_today(store, fleet):
    assert {fields["status"] for fields in fleet.values()} >= {"supported", "extended",
                                                               "unsupported", "unknown"}
    with time_machine.travel(datetime(2026, 6, 1, 12, tzinfo=timezone.utc), tick=False):
        for status in STATUSES:
            wanted = _where(fleet, lambda fields: fields["status"] == status)
            assert _found(store, _compiled(f'support.status="{status}"')) == wanted, status
            assert _found(store, _compiled(f'support.status!="{status}"')) == \
                set(fleet) - wanted, status
        # a prefix: every status it begins
        assert _found(store, _compiled('support.status="e*"')) == _where(
            fleet, lambda fields: fields["status"] in ("ending", "extended"))


def test_the_status_query_is_for_today(store, fleet):
    """A version's status changes with the day; so does what the filter finds."""
    with time_machine.travel(datetime(2026, 6, 1, 12, tzinfo=timezone.utc), tick=False):
        on_day = _found(store, _compiled('support.status="unsupported"'))
    with time_machine.travel(datetime(2030, 1, 1, 12, tzinfo=timezone.utc), tick=False):
        later = _found(store, _compiled('support.status="unsupported"'))
    assert on_day < later


@pytest.mark.parametrize("text, test", [
    ('support.ends_on<"2026-12-01"',
     lambda f: f["ends_on"] is not None and f["ends_on"] < "2026-12-01"),
    ('support.ends_on>="2026-12-01"',
     lambda f: f["ends_on"] is not None and f["ends_on"] >= "2026-12-01"),
    ('support.all_ends_on<="2027-03-01"',
     lambda f: f["all_ends_on"] is not None and f["all_ends_on"] <= "2027-03-01"),
    ('support.all_ends_on>"2027-03-01"',
     lambda f: f["all_ends_on"] is not None and f["all_ends_on"] > "2027-03-01"),
    # a cluster with no such date compares as null: only != finds it
    ('support.all_ends_on!="2026-11-26"', lambda f: f["all_ends_on"] != "2026-11-26"),
    ("support.ends_on:*", lambda f: f["ends_on"] is not None),
    # days from today (DAY)
    ('support.ends_on<"+P26W"', lambda f: f["ends_on"] is not None and f["ends_on"] < (
        DAY + timedelta(weeks=26)).isoformat()),
    ('support.all_ends_on>="-P10W"', lambda f: f["all_ends_on"] is not None
     and f["all_ends_on"] >= (DAY - timedelta(weeks=10)).isoformat()),
])
def test_a_support_date_finds_exactly_the_clusters_whose_date_passes(store, fleet, text, test):
    wanted = _where(fleet, test)
    assert wanted and wanted != set(fleet)  # the fleet has clusters on both sides
    with time_machine.travel(datetime(2026, 6, 1, 12, tzinfo=timezone.utc), tick=False):
        assert _found(store, support_date_query(parse(text))) == wanted


def test_an_equal_day_finds_the_clusters_whose_date_is_that_day(store, fleet):
    day = next(fields["ends_on"] for fields in fleet.values() if fields["ends_on"])
    with time_machine.travel(datetime(2026, 6, 1, 12, tzinfo=timezone.utc), tick=False):
        assert _found(store, _compiled(f'support.ends_on="{day}"')) == \
            _where(fleet, lambda fields: fields["ends_on"] == day)


@pytest.mark.parametrize("text, said", [
    ("support.status:*", "always present"),
    ('support.status<"ending"', "compared with = or !="),
    ("support.status=3", "compared with = or !="),
    ('support.status="gone"', "is not a support status"),
    ('support.ends_on:"2027-01-31"', "compares with"),
    ('support.ends_on="2027*"', "compares with"),
    ('support.ends_on<"tomorrow"', "is a day"),
    ('support.ends_on<"2027-02-30"', "is a day"),
    ("support.ends_on<20270131", "is a day"),
    ('support.ends_on<"20270131"', "is a day"),  # ISO 8601's basic form: not taken
    ('support.all_ends_on<"+P"', "is a day"),
])
def test_other_comparisons_are_bad_filters_saying_what_is_taken(text, said):
    with pytest.raises(BadFilter) as refused:
        _compiled(text)
    assert said in str(refused.value)


def test_clusters_where_a_cycle_keeps_them(store, fleet):
    with time_machine.travel(datetime(2026, 6, 1, 12, tzinfo=timezone.utc), tick=False):
        assert clusters_where(lambda cycle: False) is None  # keeps none: no query at all
        assert _found(store, clusters_where(lambda cycle: cycle is None)) == \
            _where(fleet, lambda fields: fields["status"] == "unknown")
        assert _found(store, clusters_where(lambda cycle: True)) == set(fleet)


def test_the_filters_are_the_three_computed_fields():
    assert SUPPORT_FILTERS == {"support.status": support_status_query,
                               "support.ends_on": support_date_query,
                               "support.all_ends_on": support_date_query}
