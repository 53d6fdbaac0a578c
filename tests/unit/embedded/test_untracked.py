"""What the embedded store writes stays out of the cyclic garbage collector's
reach (inventory/embedded/untracked.py; issue 43): a full collection walks
what it tracks, so a stored document the collector tracked was walked in
each full collection until the next start, and the walks grew with the
writes since the start (bench/collector.txt times them)."""
import gc
import os

import mongomock_ng
import pytest

from inventory.cli.seed import typical_scan
from inventory.embedded.database import LockedDatabase
from inventory.embedded.journal import Journal
from inventory.embedded.untracked import untrack
from tests.conftest import ADMIN_TOKEN, Inventory, client_with
from tests.support.journaled import make_app

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the embedded store's memory")


def tracked_within(value, path="document"):
    """The paths of the dicts and lists in `value` (itself included) the collector tracks."""
    found = [path] if isinstance(value, (dict, list)) and gc.is_tracked(value) else []
    inner = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, item in inner:
        found.extend(tracked_within(item, f"{path}.{key}"))
    return found


def stored(database):
    """{collection: [document, ...]}: the documents as the store keeps them,
    read by `uncopied` (which hands out the stored documents themselves) in
    `_id` order."""
    names = database.client[database.name].list_collection_names()
    return {name: database[name].uncopied.find({}, sort=[("_id", 1)], limit=10**9)
            for name in names}


def test_documents_committed_by_each_kind_of_write_are_untracked(tmp_path):
    raw = mongomock_ng.MongoClient()["inventory"]
    database = LockedDatabase(raw, Journal.open(str(tmp_path), raw, "no"))
    things = database["things"]
    things.insert_one({"_id": "a", "labels": {"team": "x"}, "checks": [{"id": "c", "n": [1]}]})
    things.insert_many([{"_id": f"m{n}", "nested": {"list": [n, {"deep": {}}]}}
                        for n in range(3)])
    things.update_one({"_id": "a"}, {"$set": {"observed": {"minor": 30, "nodes": [{}]}}})
    # a write the store leaves to mongomock (a filter by a field, $push)
    things.update_many({"labels.team": "x"}, {"$push": {"history": {"at": 1}}})
    things.find_one_and_update({"_id": "m0"}, {"$set": {"more": [[{}]]}})
    documents = stored(database)["things"]
    assert len(documents) == 4
    assert [path for document in documents for path in tracked_within(document)] == []
    # and nothing they hold was let go: a full collection leaves them whole
    gc.collect()
    assert things.find_one({"_id": "a"}) == {
        "_id": "a", "labels": {"team": "x"}, "checks": [{"id": "c", "n": [1]}],
        "observed": {"minor": 30, "nodes": [{}]}, "history": [{"at": 1}]}
    assert things.find_one({"_id": "m0"})["more"] == [[{}]]
    database.journal.close()


def test_what_the_collector_tracks_does_not_grow_with_rescans(tmp_path):
    """The served app's writes, as an agent's hourly rescans make them:
    after rounds of observed scans into every cluster, no stored document,
    nor anything in one, is tracked; so a full collection's walk does not
    grow with the rescans."""
    app = make_app(tmp_path)
    client = client_with(app, ADMIN_TOKEN)
    inventory = Inventory(client)
    platform = inventory.platform()["name"]
    clusters = [inventory.cluster(platform=platform)["name"] for _ in range(20)]
    database = app.extensions["inventory.store"].db
    for round_number in range(3):
        for n, name in enumerate(clusters):
            response = client.post(f"/kubeclusters/{name}/scans",
                                   json=typical_scan("1.31.2", n + round_number))
            assert response.status_code == 201, response.get_json()
        tracked = {name: path for name, documents in stored(database).items()
                   for document in documents for path in tracked_within(document)}
        assert tracked == {}, f"round {round_number}"
    # the clusters hold nested objects (the shape that CPython keeps tracked)
    cluster = database["clusters"].find_one({"_id": clusters[0]})
    assert any(isinstance(value, (dict, list)) for value in cluster.values())
    database.journal.close()


def test_untrack_leaves_what_is_not_a_dict_or_list_alone():
    class Node:
        pass
    node = Node()
    document = {"node": node, "list": [node], "dict": {"x": []}}
    untrack(document)
    assert gc.is_tracked(node)
    assert not gc.is_tracked(document) and not gc.is_tracked(document["dict"]["x"])
    # CPython's own rule: a dict that gains a container is tracked again
    document["again"] = {}
    assert gc.is_tracked(document)
