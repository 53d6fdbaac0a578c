"""The embedded store's envelope (inventory/store/envelope.py)."""
import logging


def test_the_counts_the_resources_declare_against_their_bounds(store, monkeypatch, caplog):
    monkeypatch.setattr(store.events, "shared", False)  # the embedded store's (wire: counted too)
    assert set(store.envelope()) == {"clusters", "scans", "within"}
    assert store.envelope()["within"] is True
    monkeypatch.setattr(type(store.clusters), "envelope", -1)  # any count is past it
    assert store.envelope()["within"] is False
    with caplog.at_level(logging.WARNING):
        store.warn_if_past_envelope()
    assert "past the envelope" in caplog.text


def test_mongodb_has_no_envelope(store, monkeypatch):
    monkeypatch.setattr(store.events, "shared", True)
    assert store.envelope() is None
