"""Upgrade waves: a rollout's rules, as pure functions of what the store
reads (no clock of their own: every function that moves time takes `now`,
so that tests drive it).

- A cluster's state toward the target minor T, from its minor (the observed
  one when a scan observed the server, else the recorded one) and its
  readiness' status (`cluster_state`).
- A stage's progress: waiting -> (held ->) open -> soaking -> complete, only
  forward (`advanced`).

The design, and why: docs/rollouts.md"""
import re
from datetime import datetime, timedelta

from inventory.core.filtering import PRESENT, Logical, Not, filter_error, parse
from inventory.core.ids import rfc3339
from inventory.core.versions import version_parts

CLUSTER_STATES = ("done", "ready", "blocked", "behind")
STAGE_STATES = ("waiting", "held", "open", "soaking", "complete")
ROLLOUT_STATES = ("active", "paused", "complete")
MAX_STAGES = 10
MAX_SOAK = timedelta(days=30)
UNSTAGED = "unstaged"  # what a cluster no stage matches is counted as
# readiness statuses that let a cluster one minor below the target go
GOES = frozenset({"passing", "warning"})

_MINOR_RE = re.compile(r"^(0|[1-9]\d{0,2})\.(0|[1-9]\d{0,2})$")
# ISO 8601 durations of fixed length: weeks, days, hours, minutes, seconds
# (years and months have none)
# an ISO 8601 duration of weeks, days, hours, minutes and seconds (the
# pattern the OpenAPI document states; matched whole: no trailing newline)
SOAK_PATTERN = (r"^P(?!$)(?:(\d{1,4})W)?(?:(\d{1,5})D)?"
                r"(?:T(?=\d)(?:(\d{1,6})H)?(?:(\d{1,8})M)?(?:(\d{1,9})S)?)?$")
MAX_SOAK_LENGTH = 39  # "P" 4+1 5+1 "T" 6+1 8+1 9+1
_DURATION = re.compile(SOAK_PATTERN)


def parse_target(text):
    """(major, minor) of a target such as `1.32`, or None when it is not one."""
    match = _MINOR_RE.match(text) if isinstance(text, str) else None
    return None if match is None else (int(match[1]), int(match[2]))


def parse_soak(text):
    """The timedelta of an ISO 8601 duration (`PT0S`, `PT12H`, `P2D`,
    `P1W`), or None when it is not one or lies outside PT0S..P30D."""
    match = _DURATION.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        return None
    weeks, days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    soak = timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds)
    return soak if soak <= MAX_SOAK else None


def minor_key(minor):
    """(major, minor) of a minor (`1.31`) or a version, or None."""
    parts = version_parts(minor) if isinstance(minor, str) else None
    return None if parts is None else parts[:2]


def cluster_state(minor, readiness_status, target):
    """`done`, `ready`, `blocked` or `behind`: a cluster at `minor` ((major,
    minor) or None when unknown) with readiness `readiness_status`, toward
    `target` ((major, minor)). A minor below the target by one is `ready`
    when readiness is passing or warning (its readiness target is then the
    rollout's), else `blocked`; further below (or unknown), `behind`."""
    if minor is not None and minor >= target:
        return "done"
    if minor is not None and minor == (target[0], target[1] - 1):
        return "ready" if readiness_status in GOES else "blocked"
    return "behind"


def standing(minor, readiness_status):
    """What a cluster's state toward any target is made of, as one string:
    its minor (`1.31`, empty when unknown) and its readiness' status,
    `1.31 passing`. The clusters' store keeps it with each cluster, and a
    rollout's count groups the fleet by it: one field read where three
    would be (a count's cost is the fields it reads)."""
    return f"{minor or ''} {readiness_status}"


def standing_state(text, target):
    """cluster_state of a cluster whose `standing` is `text`."""
    minor, _, readiness_status = text.partition(" ")
    return cluster_state(minor_key(minor or None), readiness_status, target)


def parse_time(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def new_progress():
    """A stage's progress before its turn."""
    return {"state": "waiting", "opened_on": None, "soak_ends_on": None,
            "completed_on": None, "approved_by": None, "approved_on": None}


def advanced(stages, progress, counts, paused, now):
    """The stages' progress moved as far forward as `counts` and `now` allow
    (a new list; the same values where nothing moves).

    `stages`: the rollout's stages (`name`, `soak`, `approval`); `progress`:
    {name: its progress}; `counts`: {name: {"clusters", "done", ...}};
    `paused`: no stage's turn comes. The first stage's turn comes at once;
    each next one's when the one before is complete. A stage whose turn
    comes is `held` if it needs an approval not yet given, else `open`; an
    open stage whose every cluster is `done` (or that has none) is
    `soaking` until its soak ends (a stage with no clusters, or a soak of
    PT0S, completes at once); then `complete`."""
    moved, previous_complete, stamp = {}, True, rfc3339(now)
    for stage in stages:
        name = stage["name"]
        state = dict(progress.get(name) or new_progress())
        count = counts.get(name) or {"clusters": 0, "done": 0}
        if state["state"] == "waiting" and previous_complete and not paused:
            state["state"] = "held" if stage["approval"] and not state["approved_on"] \
                else "open"
            if state["state"] == "open":
                state["opened_on"] = stamp
        if state["state"] == "held" and state["approved_on"] and not paused:
            state.update(state="open", opened_on=stamp)
        if state["state"] == "open" and count["done"] >= count["clusters"]:
            soak = parse_soak(stage["soak"])
            if count["clusters"] == 0 or not soak:
                state.update(state="complete", completed_on=stamp)
            else:
                state.update(state="soaking", soak_ends_on=rfc3339(now + soak))
        if state["state"] == "soaking" and parse_time(state["soak_ends_on"]) <= now:
            state.update(state="complete", completed_on=stamp)
        moved[name] = state
        previous_complete = state["state"] == "complete"
    return moved


def rollout_state(progress, paused):
    """`complete` when every stage is, else `paused` or `active`."""
    if progress and all(state["state"] == "complete" for state in progress.values()):
        return "complete"
    return "paused" if paused else "active"


def next_due(stages, progress):
    """The earliest moment a soaking stage completes (a datetime), or None."""
    ends = [parse_time(progress[stage["name"]]["soak_ends_on"]) for stage in stages
            if (progress.get(stage["name"]) or {}).get("state") == "soaking"]
    return min(ends, default=None)


# What a list of a rollout's clusters filters on: each row's stage and state
MEMBER_FIELDS = ("stage", "state")


def member_filter(text):
    """A function telling whether a row of a rollout's clusters (`{"stage",
    "state", ...}`) matches the filter `text` (None: every row): `=`, `:`,
    `!=` (a trailing `*` a prefix), `<`, `>` and the rest comparing text,
    `AND`, `OR`, `NOT`. BadFilter for anything else."""
    if not text:
        return lambda row: True
    return _row_check(parse(text))


def _row_check(tree):
    if isinstance(tree, Logical):
        checks = [_row_check(operand) for operand in tree.operands]
        joined = all if tree.op == "AND" else any
        return lambda row: joined(check(row) for check in checks)
    if isinstance(tree, Not):
        check = _row_check(tree.operand)
        return lambda row: not check(row)
    if tree.field not in MEMBER_FIELDS:
        raise filter_error(f"unknown field {tree.field!r} (fields: {', '.join(MEMBER_FIELDS)})",
                           tree.text, tree.position)
    field, value = tree.field, tree.value
    if value is PRESENT:
        return lambda row: row[field] is not None
    if not isinstance(value, str):
        raise filter_error(f"{field} is text: quote the value", tree.text, tree.position)
    if tree.prefix:
        if tree.op not in ("=", "!=", ":"):
            raise filter_error("a prefix (*) works only with =, != and :", tree.text,
                               tree.position)
        return (lambda row: not row[field].startswith(value)) if tree.op == "!=" else \
            (lambda row: row[field].startswith(value))
    compare = {"=": str.__eq__, ":": str.__eq__, "!=": str.__ne__, "<": str.__lt__,
               "<=": str.__le__, ">": str.__gt__, ">=": str.__ge__}[tree.op]
    return lambda row: compare(row[field], value)
