"""What the store's unit tests share."""
import pytest

from tests.support.stores import PLATFORM


@pytest.fixture
def tree(store):
    """An organization with one platform, one cluster and one scan."""
    org = store.organizations.create({"title": "Acme", "description": ""}, "tester")
    platform = store.platforms.create({"name": "p1", "organization": org["id"], **PLATFORM}, "tester")
    cluster = store.clusters.create({"name": "c1", "platform": "p1", "environment": "dev",
                                     "version": "1.30.1", "labels": {}}, "tester")
    scan = store.scans.create(cluster["name"], 100)
    return org, platform, cluster, scan


@pytest.fixture
def kept_windows():
    """`kept_windows(counter)`: the windows a LocalRateCounter keeps in
    memory, by (caller, amount, seconds).
    Private: they are its `_windows`; forgetting the windows that are over
    frees memory and changes no answer, so it is seen only there."""
    return lambda counter: list(counter._windows)
