"""The console's own pages: the overview's counts, kept a while per scope."""
from inventory.ui import views


def test_counts_are_kept_per_scope_for_a_while(store, inventory, monkeypatch):
    counts = views.Counts()
    inventory.cluster(name="first")
    assert counts.get(store, None)[0]["support"][1] == 1
    inventory.cluster(name="second")
    assert counts.get(store, None)[0]["support"][1] == 1  # kept
    assert counts.get(store, "org_other")[0]["support"][1] == 0  # another scope: its own
    monkeypatch.setattr(views, "COUNTS_SECONDS", 0)
    assert counts.get(store, None)[0]["support"][1] == 2
