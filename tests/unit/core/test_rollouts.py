"""A rollout's rules alone (inventory/core/rollouts.py): soaks' bounds, a
cluster's state at each boundary, a stage's progress on a given clock,
and the filter of a rollout's clusters list."""
from datetime import datetime, timedelta, timezone

import pytest

from inventory.core import rollouts as rules
from inventory.core.errors import BadFilter

T = (1, 32)
NOW = datetime(2026, 11, 27, 12, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, seconds", [
    ("PT0S", 0), ("PT1S", 1), ("PT12H", 43200), ("P2D", 172800), ("P1W", 604800),
    ("P1DT1H30M", 91800), ("P30D", 30 * 86400), ("P4WT48H", 30 * 86400),
    ("P31D", None), ("P30DT1S", None), ("P1M", None), ("P1Y", None), ("-PT1S", None),
    ("P", None), ("PT", None), ("1D", None), ("", None), (None, None), ("P1.5D", None)])
def test_a_soak_is_an_iso_duration_from_pt0s_to_p30d(text, seconds):
    soak = rules.parse_soak(text)
    assert (None if soak is None else soak.total_seconds()) == seconds


@pytest.mark.parametrize("text, parsed", [("1.32", (1, 32)), ("2.0", (2, 0)),
                                          ("1.32.0", None), ("v1.32", None), ("1", None),
                                          ("01.32", None), ("", None), (None, None)])
def test_a_target_is_a_minor(text, parsed):
    assert rules.parse_target(text) == parsed


@pytest.mark.parametrize("minor, readiness, state", [
    ((1, 33), "error", "done"), ((1, 32), "unknown", "done"), ((2, 0), "error", "done"),
    ((1, 31), "passing", "ready"), ((1, 31), "warning", "ready"),
    ((1, 31), "error", "blocked"), ((1, 31), "unknown", "blocked"), ((1, 31), None, "blocked"),
    ((1, 30), "passing", "behind"), ((0, 31), "passing", "behind"), (None, "passing", "behind"),
])
def test_each_cluster_state_boundary(minor, readiness, state):
    assert rules.cluster_state(minor, readiness, T) == state


STAGES = [{"name": "a", "soak": "PT1H", "approval": False},
          {"name": "b", "soak": "PT0S", "approval": True},
          {"name": "c", "soak": "PT0S", "approval": False}]


def _states(progress):
    return [progress[name]["state"] for name in ("a", "b", "c")]


def test_stages_move_forward_on_the_clock_given():
    counts = {"a": {"clusters": 2, "done": 1}, "b": {"clusters": 1, "done": 0},
              "c": {"clusters": 0, "done": 0}}
    moved = rules.advanced(STAGES, {}, counts, False, NOW)
    assert _states(moved) == ["open", "waiting", "waiting"]
    counts["a"]["done"] = 2
    later = NOW + timedelta(minutes=10)
    moved = rules.advanced(STAGES, moved, counts, False, later)
    assert _states(moved) == ["soaking", "waiting", "waiting"]
    assert moved["a"]["soak_ends_on"] == "2026-11-27T13:10:00.000Z"
    moved = rules.advanced(STAGES, moved, counts, False, later + timedelta(minutes=59))
    assert _states(moved) == ["soaking", "waiting", "waiting"]
    counts["a"]["done"] = 1  # a cluster joins that is not done: the soak goes on
    moved = rules.advanced(STAGES, moved, counts, False, later + timedelta(hours=1))
    assert _states(moved) == ["complete", "held", "waiting"]
    assert rules.advanced(STAGES, moved, counts, False, later + timedelta(days=9)) == moved
    approved = {**moved, "b": {**moved["b"], "approved_on": "2026-11-28T00:00:00.000Z",
                               "approved_by": "w"}}
    assert _states(rules.advanced(STAGES, approved, counts, True, NOW)) == \
        ["complete", "held", "waiting"]  # paused: no turn comes
    moved = rules.advanced(STAGES, approved, counts, False, NOW)
    assert _states(moved) == ["complete", "open", "waiting"]
    counts["b"]["done"] = 1
    moved = rules.advanced(STAGES, moved, counts, False, NOW)
    assert _states(moved) == ["complete", "complete", "complete"]  # c has no clusters
    assert rules.rollout_state(moved, paused=True) == "complete"


def test_the_clusters_list_filter_takes_stage_and_state_only():
    rows = [{"stage": "canary", "state": "done"}, {"stage": "canary", "state": "blocked"},
            {"stage": "prod", "state": "blocked"}]
    kept = rules.member_filter('state="blocked" AND NOT stage="can*"')
    assert [row for row in rows if kept(row)] == [rows[2]]
    kept = rules.member_filter('stage="canary" OR state!="blocked"')
    assert [row for row in rows if kept(row)] == rows[:2]
    for bad in ('version="1.31"', "state=1", 'state>"a*"'):
        with pytest.raises(BadFilter):
            rules.member_filter(bad)


@pytest.mark.parametrize("minor, status, state", [
    ("1.32", "error", "done"), ("1.33", "unknown", "done"), ("1.31", "warning", "ready"),
    ("1.31", "passing", "ready"), ("1.31", "unknown", "blocked"), ("1.31", "error", "blocked"),
    ("1.30", "passing", "behind"), (None, "passing", "behind")])
def test_a_standing_reads_back_as_the_state_its_minor_and_status_make(minor, status, state):
    text = rules.standing(minor, status)
    assert text == f"{minor or ''} {status}"
    assert rules.standing_state(text, (1, 32)) == state \
        == rules.cluster_state(rules.minor_key(minor), status, (1, 32))
