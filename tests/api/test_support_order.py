"""`order_by=support.ends_on` and `support.all_ends_on` on /kubeclusters:
what leaves support soonest first, unknown dates last, paged by order keys
that follow the days and the lifecycle data."""
import datetime

import pytest
import time_machine

from inventory.core.lifecycle import LIFECYCLES, SUPPORT_DATE_FIELDS
from inventory.resources.clusters import store as cluster_store
from inventory.resources.clusters.store import SUPPORT_DATES
from tests.conftest import client_with, walk
from tests.support.ordering import expected

# The days these tests move through are EKS 1.31's last days of extended
# support (2026-11-26); records are made a month before, whatever today is.
BEFORE_131_ENDS = datetime.datetime.combine(
    LIFECYCLES.cycles["eks"]["1.31"].extended_ends - datetime.timedelta(days=30),
    datetime.time(12), datetime.timezone.utc)


@pytest.fixture(autouse=True)
def _a_month_before_131_ends():
    with time_machine.travel(BEFORE_131_ENDS, tick=True):
        yield

FIELDS = ["support.ends_on", "support.all_ends_on"]
VERSIONS = ["1.31.2", "v1.29.4-eks-1", "1.33.1", "1.30.0", "1.28.9", "1.32.0", "1.99.0", "2.0",
            "1.31.7"]


def dates(records, field):
    return [record["support"][field.removeprefix("support.")] for record in records]


@pytest.fixture
def estate(inventory):
    """Clusters of every distribution on known and unknown versions, with
    ties (the same minor on the same distribution)."""
    org = inventory.org()["id"]
    platforms = [inventory.platform(org, name=f"on-{provider}",
                                    control_plane={"provider": provider})["name"]
                 for provider in ("eks", "gke", "aks", "kubeadm")]
    for i, version in enumerate(VERSIONS * 2):
        inventory.cluster(platforms[i % len(platforms)], name=f"c{(i * 7) % 18:02d}-{i}",
                          version=version, environment=("production", "dev")[i % 2])
    return org


@pytest.mark.parametrize("field", FIELDS)
@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("limit", [1, 4, 100])
def test_walks_are_in_date_order_with_unknown_dates_last(client, estate, field, desc, limit):
    order_by = f"{field} desc" if desc else field
    records, _ = walk(client, "/kubeclusters", limit=limit, order_by=order_by)
    assert [r["name"] for r in records] == \
        [r["name"] for r in expected(records, order_by, "name")]
    assert len({r["name"] for r in records}) == len(records) == 2 * len(VERSIONS)
    found = dates(records, field)
    known = [day for day in found if day is not None]
    assert known == sorted(known, reverse=desc)
    unknown_at = [i for i, day in enumerate(found) if day is None]
    assert unknown_at, "the estate has clusters with no known date"
    # no date: after every date ascending, before every one with desc
    assert unknown_at == (list(range(len(unknown_at))) if desc else
                          list(range(len(found) - len(unknown_at), len(found))))


@pytest.mark.parametrize("field", FIELDS)
def test_ties_are_broken_by_name_and_desc_is_the_exact_reverse(client, estate, field):
    ascending, _ = walk(client, "/kubeclusters", limit=3, order_by=field)
    descending, _ = walk(client, "/kubeclusters", limit=5, order_by=f"{field} desc")
    assert [r["name"] for r in descending] == [r["name"] for r in reversed(ascending)]
    by_day = {}
    for record in ascending:
        by_day.setdefault(dates([record], field)[0], []).append(record["name"])
    assert any(len(names) > 1 for names in by_day.values()), "the estate has ties"
    for names in by_day.values():
        assert names == sorted(names)


def test_the_fleet_question_is_one_request(client, estate):
    """Production clusters that leave support of any kind within 60 days,
    soonest first."""
    query = {"filter": 'environment="production" AND support.all_ends_on<="+P60D"',
             "order_by": "support.all_ends_on", "limit": 100}
    records = client.get("/kubeclusters", query_string=query).get_json()["results"]
    assert records and all(r["environment"] == "production" for r in records)
    assert dates(records, "support.all_ends_on") == sorted(dates(records, "support.all_ends_on"))
    everything, _ = walk(client, "/kubeclusters", limit=100)
    horizon = (datetime.datetime.now(datetime.timezone.utc).date()
               + datetime.timedelta(days=60)).isoformat()
    assert {r["name"] for r in records} == {
        r["name"] for r in everything if r["environment"] == "production"
        and r["support"]["all_ends_on"] is not None and r["support"]["all_ends_on"] <= horizon}


def test_a_scoped_token_walks_its_organization_in_date_order(app, client, inventory, estate):
    other = inventory.org(title="Other")["id"]
    inventory.cluster(inventory.platform(other)["name"], name="elsewhere", version="1.28.1")
    token = client.post("/tokens", json={"name": "r", "role": "reader",
                                         "organization": estate}).get_json()["token"]
    records, _ = walk(client_with(app, token), "/kubeclusters", limit=3,
                      order_by="support.ends_on")
    assert "elsewhere" not in {r["name"] for r in records}
    assert [r["name"] for r in records] == \
        [r["name"] for r in expected(records, "support.ends_on", "name")]


def test_a_version_change_moves_the_cluster(client, inventory):
    platform = inventory.platform()["name"]
    for name, version in (("a", "1.30.1"), ("b", "1.31.1"), ("c", "1.32.1")):
        inventory.cluster(platform, name=name, version=version)
    order = {"order_by": "support.all_ends_on", "limit": 10}
    names = [r["name"] for r in client.get("/kubeclusters", query_string=order).get_json()["results"]]
    assert names == ["a", "b", "c"]
    assert client.patch("/kubeclusters/a", json={"version": "1.99.0"}).status_code == 200
    names = [r["name"] for r in client.get("/kubeclusters", query_string=order).get_json()["results"]]
    assert names == ["b", "c", "a"]


def test_the_order_follows_the_day(client, inventory, store, monkeypatch):
    """On the day EKS 1.31's extended support ends, its clusters' `ends_on`
    becomes null: they move last, with no write of theirs."""
    eks = inventory.platform(control_plane={"provider": "eks"})["name"]
    inventory.cluster(eks, name="on-131", version="1.31.2")
    inventory.cluster(eks, name="on-133", version="1.33.1")
    inventory.cluster(eks, name="on-199", version="1.99.0")
    cycle = LIFECYCLES.cycles["eks"]["1.31"]
    before = cycle.extended_ends - datetime.timedelta(days=1)
    monkeypatch.setattr(cluster_store, "today", lambda: before)
    order = {"order_by": "support.ends_on", "limit": 10}

    def listed():
        records = client.get("/kubeclusters", query_string=order).get_json()["results"]
        assert [r["name"] for r in records] == \
            [r["name"] for r in expected(records, "support.ends_on", "name")]
        return [(r["name"], r["support"]["ends_on"]) for r in records]
    assert listed()[0] == ("on-131", cycle.extended_ends.isoformat())
    monkeypatch.setattr(cluster_store, "today", lambda: cycle.extended_ends)
    assert listed()[-2:] == [("on-131", None), ("on-199", None)]
    kept = store.db.settings.find_one({"_id": SUPPORT_DATES})
    assert kept["day"] == cycle.extended_ends.isoformat()


@pytest.mark.parametrize("slice_size", [2, 500])
def test_a_refresh_on_a_later_day_rewrites_only_what_changed(inventory, store, monkeypatch,
                                                             slice_size):
    monkeypatch.setattr(cluster_store, "REWRITE_SLICE", slice_size)  # read in slices of keys
    eks = inventory.platform(control_plane={"provider": "eks"})["name"]
    for i in range(3):
        inventory.cluster(eks, name=f"old-{i}", version="1.31.2")
        inventory.cluster(eks, name=f"new-{i}", version="1.33.1")
    cycle = LIFECYCLES.cycles["eks"]["1.31"]
    store.clusters.refresh_support_dates(cycle.extended_ends - datetime.timedelta(days=5))
    assert store.clusters.refresh_support_dates(
        cycle.extended_ends - datetime.timedelta(days=5)) == 0  # the same day: nothing
    # the day 1.31's extended support ends: its three clusters, nothing of 1.33
    assert store.clusters.refresh_support_dates(cycle.extended_ends) == 3


def test_other_lifecycle_data_rewrites_every_clusters_dates(client, inventory, store,
                                                           monkeypatch, forget_support_dates):
    monkeypatch.setattr(cluster_store, "REWRITE_SLICE", 2)
    platform = inventory.platform()["name"]
    for name, version in (("a", "1.30.1"), ("b", "1.31.1"), ("c", "1.32.1")):
        inventory.cluster(platform, name=name, version=version)
    # as if the dates had been worked out from other data: b's says the far past
    field = SUPPORT_DATE_FIELDS["support.all_ends_on"]
    store.clusters.collection.update_one(
        {"_id": "b"}, {"$set": {field: "2000-01-01",
                                store.clusters.order_field(
                                    store.clusters.orderings.resolve("support.all_ends_on")[0]):
                                    "3230"}})
    store.db.settings.update_one({"_id": SUPPORT_DATES}, {"$set": {"data": "older data"}},
                                 upsert=True)
    forget_support_dates()  # as a process started with the new release
    order = {"order_by": "support.all_ends_on", "limit": 10}
    names = [r["name"] for r in client.get("/kubeclusters", query_string=order).get_json()["results"]]
    assert names == ["a", "b", "c"]
    assert store.clusters.collection.find_one({"_id": "b"})[field] != "2000-01-01"


def test_clusters_written_before_the_support_orderings_get_their_dates(client, inventory,
                                                                        store):
    platform = inventory.platform()["name"]
    for name, version in (("a", "1.32.1"), ("b", "1.30.1"), ("c", "1.99.1")):
        inventory.cluster(platform, name=name, version=version)
    clusters = store.clusters
    stale = {field: "" for _, field in clusters.kept_orderings() if "support" in field}
    stale.update(dict.fromkeys(SUPPORT_DATE_FIELDS.values(), ""))
    clusters.collection.update_many({}, {"$unset": stale})
    store.db.settings.delete_one({"_id": SUPPORT_DATES})
    store.create_indexes()
    for doc in clusters.collection.find({}):
        assert set(stale) <= set(doc)
    records, _ = walk(client, "/kubeclusters", limit=1, order_by="support.all_ends_on")
    assert [r["name"] for r in records] == ["b", "a", "c"]
