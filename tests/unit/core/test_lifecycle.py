"""Kubernetes' lifecycle (inventory/core/lifecycle.py): a minor's status on
a day at each boundary, a cluster's `support`, and the version-key ranges
a status filter walks."""
import datetime

from inventory.core.lifecycle import (
    ENDING_WITHIN,
    LIFECYCLES,
    Cycle,
    Lifecycles,
    distribution_of,
    minor_of,
)
from inventory.core.versions import version_key

DAY = datetime.date


def test_the_distribution_of_a_provider():
    assert distribution_of(" EKS ") == "eks" and distribution_of("gke") == "gke"
    assert distribution_of("kind") == "upstream" and distribution_of(None) == "upstream"


def test_the_minor_of_a_version():
    assert minor_of("v1.31.2-eks-1234") == "1.31" and minor_of("1.9") == "1.9"
    assert minor_of("nope") is None


def test_a_cycles_status_at_each_boundary():
    cycle = Cycle("1.30", DAY(2024, 4, 17), DAY(2025, 6, 28), DAY(2026, 6, 28))
    warn = cycle.standard_ends - ENDING_WITHIN
    one = datetime.timedelta(days=1)
    assert cycle.status(warn - one) == ("supported", warn)
    assert cycle.status(warn) == ("ending", cycle.standard_ends)
    assert cycle.status(cycle.standard_ends) == ("extended", cycle.extended_ends)
    assert cycle.status(cycle.extended_ends) == ("unsupported", None)
    plain = Cycle("1.30", DAY(2024, 4, 17), DAY(2025, 6, 28), None)
    assert plain.status(plain.standard_ends) == ("unsupported", None)
    assert Cycle("1.40", DAY(2030, 1, 1), None, None).status(DAY(2031, 1, 1)) == \
        ("supported", None)


DOCUMENT = {
    "source": {"name": "test", "date": "2026-01-01", "commit": "0" * 40},
    "distributions": {
        "upstream": {
            "1.29": {"released_on": "2023-12-13", "standard_support_ends_on": "2025-02-28",
                     "extended_support_ends_on": None},
            "1.30": {"released_on": "2024-04-17", "standard_support_ends_on": "2025-06-28",
                     "extended_support_ends_on": None},
            "1.31": {"released_on": "2024-08-13", "standard_support_ends_on": "2025-10-28",
                     "extended_support_ends_on": None}},
        "eks": {}, "gke": {}, "aks": {}}}


def test_a_clusters_support_on_a_day():
    data = Lifecycles(DOCUMENT)
    support = data.support("upstream", "1.30.4", DAY(2025, 1, 1))
    assert support["status"] == "supported" and support["ends_on"] == "2025-03-30"
    assert support["lifecycle"]["minor"] == "1.30"
    assert support["lifecycle"]["source"] == "test 2026-01-01 (000000000000)"
    assert data.support("upstream", "1.28.0", DAY(2025, 1, 1))["status"] == "unknown"
    assert data.support("eks", "1.30.0", DAY(2025, 1, 1))["status"] == "unknown"
    first = data.support("upstream", "1.30.4", DAY(2025, 1, 1))
    first["lifecycle"]["minor"] = "changed"  # each answer is its own
    assert data.support("upstream", "1.30.1", DAY(2025, 1, 1))["lifecycle"]["minor"] == "1.30"
    assert data.support_dates("upstream", "1.30.4", DAY(2025, 1, 1))["_support_ends_on"] == \
        "2025-03-30"


def test_the_version_ranges_of_a_status_merge_adjacent_minors():
    data = Lifecycles(DOCUMENT)
    day = DAY(2025, 7, 1)  # 1.29 and 1.30 ended; 1.31 ending from 2025-07-30
    (low, high), = data.version_ranges("upstream", {"unsupported"}, day)
    assert (low, high) == (version_key("1.29"), version_key("1.31"))
    unknown = data.version_ranges("upstream", {"unknown"}, day)
    assert unknown == [(None, version_key("1.29")), (version_key("1.32"), None)]
    assert data.status_of_minor("upstream", "1.31", day) == "supported"
    assert data.status_of_minor("upstream", "1.31", DAY(2025, 7, 30)) == "ending"
    assert data.status_of_minor("upstream", None, day) == "unknown"


def test_the_shipped_data_loads_with_every_distribution():
    assert set(LIFECYCLES.cycles) == {"upstream", "eks", "gke", "aks"}
    assert LIFECYCLES.cycles["upstream"]["1.30"].released_on == DAY(2024, 4, 17)
