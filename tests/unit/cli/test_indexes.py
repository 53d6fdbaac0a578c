"""`flask --app app create-indexes` (inventory/cli/indexes.py), the
Procfile's release step: the store's indexes made, and run twice, no harm."""


def test_the_release_step_creates_the_indexes_and_may_run_again(runner, store, monkeypatch):
    made, create = [], store.create_indexes
    monkeypatch.setattr(store, "create_indexes", lambda: made.append(1) or create())
    for _ in range(2):
        result = runner.invoke(args=["create-indexes"])
        assert result.exit_code == 0 and result.output == "Indexes created.\n", result.output
    assert made == [1, 1]
    assert "platform_1__id_1" in store.clusters.collection.index_information()
