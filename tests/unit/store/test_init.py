"""The store's front (inventory/store/__init__.py): the `Store` it wires."""
import pytest

from tests.conftest import REAL_MONGO


def test_signing_key_is_made_once_and_kept(store):
    assert store.signing_key() == store.signing_key()


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's start (on MongoDB: the release step)")
def test_a_serving_embedded_start_settles_derived_fields_after_it_answers(tmp_path):
    """Clusters written before their rollout standing existed get it from a
    pass the start runs after its first answer (at the envelope the pass
    writes for 34 s; a start must answer within 10)."""
    import time

    from app import create_app
    from inventory.config import Config
    from inventory.resources.clusters.spec import ROLLOUT_STANDING_FIELD

    data = str(tmp_path / "data")
    app = create_app(Config(TESTING=True, INVENTORY_DATA_DIR=data, INVENTORY_FSYNC="no"))
    result = app.test_cli_runner().invoke(args=["seed", "--clusters", "12",
                                                "--scans-per-cluster", "1"])
    assert result.exit_code == 0, result.output
    written_before = {ROLLOUT_STANDING_FIELD: {"$exists": False}}
    store = app.extensions["inventory.store"]
    store.clusters.collection.update_many({}, {"$unset": {ROLLOUT_STANDING_FIELD: ""}})
    assert store.clusters.collection.count_documents(written_before) == 12
    store.db.journal.close()
    served = create_app(Config(TESTING=True, ANNOUNCE=True, INVENTORY_DATA_DIR=data,
                               INVENTORY_FSYNC="no"))
    clusters = served.extensions["inventory.store"].clusters.collection
    deadline = time.monotonic() + 30
    while clusters.count_documents(written_before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert clusters.count_documents(written_before) == 0
