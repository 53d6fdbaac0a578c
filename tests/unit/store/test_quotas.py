"""Quotas per organization (inventory/store/quotas.py), on the counts kept
on organization documents alone: a new organization is counted from birth;
its quota is its own or the deployment's default; a reservation counts one
more up to the quota (QuotaExceeded past it), and is settled or released
(once); reservations whose child never came are healed after LEASE, those
whose child came are kept; deletes count less; an organization written
before the counts is recounted (its records and pending reservations);
a reservation on an organization that keeps changing gives up (Contended).
Through HTTP and under real concurrency: tests/api/test_quotas.py."""
from datetime import datetime, timezone

import pytest

from inventory.core.errors import Contended, QuotaExceeded
from inventory.store.quotas import COUNTED, LEASE, RESERVING, USED, Quotas

DEFAULTS = {"clusters": 2, "tokens": 5}


@pytest.fixture
def quotas(store):
    """Quotas over collections of their own: `orgs`, and each kind's records."""
    quotas = Quotas(store.db["quota_orgs"], DEFAULTS)
    quotas.children = {"clusters": store.db["quota_clusters"], "tokens": store.db["quota_tokens"]}
    return quotas


def _org(counts, org_id="o1", **fields):
    """A new organization in `counts` (a Quotas), with `fields` (its own `quotas`)."""
    counts.organizations.insert_one({"_id": org_id, **counts.fresh(), **fields})
    return org_id


def _used(quotas, org_id="o1"):
    return quotas.organizations.find_one({"_id": org_id})[USED]


def _reserve(quotas, child_id, org_id="o1", kind="clusters"):
    return quotas.reserve(org_id, kind, child_id, {"_id": child_id})


def _insert_child(quotas, child_id, org_id="o1", kind="clusters"):
    quotas.children[kind].insert_one({"_id": child_id, "organization": org_id})


def _long_ago():
    return datetime.now(timezone.utc).replace(tzinfo=None) - 2 * LEASE  # naive UTC, as stored


def test_a_new_organization_is_counted_from_birth_holding_nothing(quotas):
    assert quotas.kinds == ("clusters", "tokens")
    assert quotas.fresh() == {USED: {"clusters": 0, "tokens": 0}, COUNTED: True}


def test_an_organizations_quota_is_its_own_or_the_default(quotas):
    assert quotas.effective({"quotas": {"clusters": 7}}) == {"clusters": 7, "tokens": 5}
    assert quotas.effective({}) == quotas.effective({"quotas": None}) == DEFAULTS


def test_reservations_count_up_to_the_quota_then_are_refused_naming_it(quotas):
    _org(quotas)
    assert _reserve(quotas, "c1") and _reserve(quotas, "c2")
    with pytest.raises(QuotaExceeded) as refused:
        _reserve(quotas, "c3")
    assert (refused.value.quota, refused.value.used, refused.value.limit) == ("clusters", 2, 2)
    assert _used(quotas) == {"clusters": 2, "tokens": 0}  # the refused one counted nothing


def test_an_organizations_own_quota_holds_over_the_default(quotas):
    _org(quotas, quotas={"clusters": 3})
    for child in ("c1", "c2", "c3"):
        assert _reserve(quotas, child)
    with pytest.raises(QuotaExceeded):
        _reserve(quotas, "c4")


def test_a_settled_reservation_stays_counted_a_released_one_counts_less_once(quotas):
    _org(quotas)
    _reserve(quotas, "c1")
    _reserve(quotas, "c2")
    assert quotas.settle("o1", "clusters", "c1") is True
    assert set(quotas.organizations.find_one({"_id": "o1"})[RESERVING]["clusters"]) == {"c2"}
    quotas.release("o1", "clusters", "c2")
    quotas.release("o1", "clusters", "c2")  # a second release counts nothing
    quotas.release("o1", "clusters", "c1")  # nor one of a settled child
    assert _used(quotas)["clusters"] == 1
    assert quotas.settle("o1", "clusters", "c2") is False  # released: no longer reserved


def test_no_reservation_in_an_organization_gone_or_being_deleted(quotas):
    assert _reserve(quotas, "c1", org_id="gone") is False
    _org(quotas, "o2", _deleting=True)
    assert _reserve(quotas, "c1", org_id="o2") is False
    assert _used(quotas, "o2")["clusters"] == 0


def test_deletes_count_less_by_what_they_deleted(quotas):
    _org(quotas, quotas={"clusters": 10})
    for child in ("c1", "c2", "c3"):
        _reserve(quotas, child)
    quotas.freed("o1", "clusters", 2)
    quotas.freed("o1", "clusters", 0)
    assert _used(quotas)["clusters"] == 1


def test_a_full_organization_heals_the_stale_reservations_whose_child_never_came(quotas):
    _org(quotas)
    _reserve(quotas, "died")  # its create died before inserting
    _reserve(quotas, "landed")
    _insert_child(quotas, "landed")  # inserted, not settled yet
    quotas.organizations.update_one({"_id": "o1"}, {"$set": {
        f"{RESERVING}.clusters.died.at": _long_ago(),
        f"{RESERVING}.clusters.landed.at": _long_ago()}})
    assert _reserve(quotas, "new")  # the dead one's place, given back
    assert _used(quotas)["clusters"] == 2
    reserving = quotas.organizations.find_one({"_id": "o1"})[RESERVING]["clusters"]
    assert set(reserving) == {"landed", "new"}
    with pytest.raises(QuotaExceeded):  # the landed child keeps its place
        _reserve(quotas, "more")


def test_a_reservation_within_its_lease_is_not_healed(quotas):
    _org(quotas)
    _reserve(quotas, "slow")
    _reserve(quotas, "slower")
    assert quotas.heal(quotas.organizations.find_one({"_id": "o1"}), "clusters") is False
    with pytest.raises(QuotaExceeded):
        _reserve(quotas, "c3")


def test_an_organization_written_before_the_counts_is_recounted_once(quotas):
    quotas.organizations.insert_one({"_id": "old", USED: {"clusters": -1}})  # a delete's count
    for child in ("a", "b"):
        _insert_child(quotas, child, org_id="old")
    _insert_child(quotas, "t", org_id="old", kind="tokens")
    _insert_child(quotas, "elsewhere", org_id="o9")
    _org(quotas, "counted")
    assert quotas.count_uncounted() == 1
    doc = quotas.organizations.find_one({"_id": "old"})
    assert doc[USED] == {"clusters": 2, "tokens": 1} and doc[COUNTED] is True
    assert _used(quotas, "counted") == {"clusters": 0, "tokens": 0}
    assert quotas.count_uncounted() == 0
    assert quotas.recount("old") is False and quotas.recount("gone") is False


def test_a_recount_counts_a_reservation_whose_child_is_not_in_yet(quotas):
    _org(quotas, quotas={"clusters": 5})
    for child in ("coming", "also-coming", "in"):
        _reserve(quotas, child)
    _insert_child(quotas, "in")
    quotas.organizations.update_one({"_id": "o1"}, {"$unset": {COUNTED: ""}})
    assert quotas.recount("o1") is True
    assert _used(quotas)["clusters"] == 3  # "in" once, as a record, and the two coming


class ChangingEveryTime:
    """The organizations' collection, where each conditional write finds the
    organization changed since it was read."""

    def __init__(self, collection):
        self.collection = collection

    def find_one(self, *args, **kwargs):
        return self.collection.find_one(*args, **kwargs)

    def update_one(self, query, update):
        return self.collection.update_one({"_id": "changed meanwhile"}, update)


def test_a_reservation_on_an_organization_that_keeps_changing_gives_up(quotas):
    _org(quotas)
    quotas.organizations = ChangingEveryTime(quotas.organizations)
    with pytest.raises(Contended):
        _reserve(quotas, "c1")
