"""The rollouts' console pages: a stage's bar, each state as wide as its
share of the stage's clusters, in the bars' order."""
from inventory.ui.rollouts import BAR_WIDTH, STATES, stage_bar


def test_a_stages_bar_is_its_states_shares_side_by_side():
    stage = {"clusters": 4, "done": 2, "ready": 1, "blocked": 1, "behind": 0}
    parts = stage_bar(stage)
    assert [part[0] for part in parts] == [state for state, _ in STATES]
    assert [(x, width, count) for _, _, x, width, count in parts] == [
        (0, BAR_WIDTH // 2, 2), (BAR_WIDTH // 2, BAR_WIDTH // 4, 1),
        (3 * BAR_WIDTH // 4, BAR_WIDTH // 4, 1), (BAR_WIDTH, 0, 0)]


def test_an_empty_stages_bar_is_empty():
    assert all(width == 0 for _, _, _, width, _ in stage_bar(
        {"clusters": 0, "done": 0, "ready": 0, "blocked": 0, "behind": 0}))
