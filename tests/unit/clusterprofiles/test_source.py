"""The inventory as the syncer reads it (inventory/clusterprofiles/source.py):
an answer that is not the inventory's list (another service's, a proxy's)
is a one-line `SourceError`, which the loop retries, never a crash."""
import json

import pytest

from inventory.clusterprofiles.source import Inventory, SourceError


class _Answer:
    def __init__(self, body, status=200):
        self.status, self.data, self.headers = status, json.dumps(body).encode(), {}


def _inventory(body):
    inventory = Inventory("http://inventory.example", "inv_token")
    inventory.pool.request = lambda *args, **kwargs: _Answer(body)
    return inventory


@pytest.mark.parametrize("body", [
    [], {}, {"results": "clusters"}, {"results": [["a"]]}, {"results": [{"id": "k8scl_1"}]},
    {"results": [{"name": 7}]}, {"results": [{"name": "a"}], "pagination": "next"}])
def test_an_answer_that_is_not_the_inventorys_list_is_a_source_error(body):
    with pytest.raises(SourceError, match=r"^GET /kubeclusters: the answer is not the "):
        list(_inventory(body).clusters())


@pytest.mark.parametrize("body", [[], {"results": [{"type": "kubecluster.created"}]}])
def test_a_feed_page_that_is_not_the_inventorys_is_a_source_error(body):
    inventory = _inventory(body)
    with pytest.raises(SourceError):
        inventory.events_after("evt_1", wait=0)
    with pytest.raises(SourceError):
        inventory.newest_event()


def test_the_inventorys_lists_are_read():
    inventory = _inventory({"results": [{"name": "a", "id": "evt_1"}], "pagination": {}})
    assert [c["name"] for c in inventory.clusters()] == ["a"]
    assert inventory.newest_event() == "evt_1"
