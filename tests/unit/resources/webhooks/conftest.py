"""What the webhooks' store tests share."""
import pytest

from inventory.resources.webhooks import store as webhooks_store


@pytest.fixture
def sweep_slice(monkeypatch):
    """Webhooks read two at a time by `WebhookStore.scheduled`.

    Private: the sweep's slice (`_SWEEP_SLICE`, 200) has no setting; two
    shows its slices and pauses with five webhooks rather than hundreds."""
    monkeypatch.setattr(webhooks_store, "_SWEEP_SLICE", 2)
    return 2
