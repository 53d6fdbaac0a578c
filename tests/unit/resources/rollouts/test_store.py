"""The rollouts' store (inventory/resources/rollouts/store.py), through its
public methods only (its counting internals change): a rollout's clusters
counted by the first stage whose filter matches them, by state toward the
target, and the unstaged; the first stage's turn at creation, the next's
once the one before completes (after its soak), only forward; a held stage
approved (NotNow if not held, InvalidField if no such stage); a stage's
change of state is the rollout's `rollout.updated` event, once; `look_due`
looks at the rollouts a change or a soak's end made due, each once; a
change of stages is counted at once; the ETag carries the counts."""

import pytest

from inventory.core.errors import InvalidField, NotFound, NotNow, StaleRevision
from inventory.resources.clusters.spec import ROLLOUT_STANDING_FIELD
from inventory.resources.rollouts.store import LOOK_SECONDS
from inventory.store.pages import PageRequest
from tests.support.clocks import Clock
from tests.support.stores import PLATFORM


@pytest.fixture
def clock(store):
    clock = Clock()
    store.rollouts.clock = clock
    return clock


@pytest.fixture
def fleet(store):
    org = store.organizations.create({"title": "Acme", "description": ""}, "tester")
    store.platforms.create({"name": "eks", "organization": org["id"], **PLATFORM}, "t")
    return org


def _cluster(store, name, version, ready=False, **labels):
    """A cluster at `version`; `ready`: scanned clean (readiness passing)."""
    store.clusters.create({"name": name, "platform": "eks", "environment": "dev",
                           "version": version, "labels": labels}, "t")
    if ready:
        server = f"v{version}"
        store.clusters.record_scan(store.clusters.find_doc(name), {
            "_id": f"{name}-scan", "id": f"k8scs_{name}", "scanned_on": 100,
            "server": {"git_version": server},
            "nodes": {"count": 1, "kubelet_versions": {server: 1},
                      "kube_proxy_versions": {server: 1}},
            "deprecated_api_requests": [], "findings": []})
        assert store.clusters.get(name)["readiness"]["status"] == "passing"


def _stage(name, filter="", soak="PT0S", approval=False):
    return {"name": name, "filter": filter, "soak": soak, "approval": approval}


def _rollout(store, stages, name="wave", target="1.32", paused=False):
    return store.rollouts.create({"name": name, "title": "", "target": target,
                                  "paused": paused, "stages": stages}, "maker")


def _states(record):
    return {stage["name"]: stage["state"] for stage in record["status"]["stages"]}


def _rollout_events(store):
    return [event for event in store.events.page(PageRequest(100)).records
            if event["type"] == "rollout.updated"]


@pytest.mark.parametrize("canary", ['labels.wave="canary"', 'name="can-*"'])
def test_clusters_are_counted_by_their_first_matching_stage_and_state(store, fleet, clock,
                                                                      canary):
    """Both filters select the same clusters: one on a label (few values),
    one on the name; the counts are the same."""
    _cluster(store, "can-done", "1.32.0", wave="canary")
    _cluster(store, "can-ready", "1.31.2", ready=True, wave="canary")
    _cluster(store, "can-blocked", "1.31.2", wave="canary")  # never scanned: not ready
    _cluster(store, "prod-behind", "1.29.0", tier="prod")
    _cluster(store, "prod-canary", "1.32.0", wave="canary", tier="prod")  # canary's: first
    _cluster(store, "can-prod", "1.30.0", wave="canary", tier="prod")  # canary's: first
    _cluster(store, "other", "1.30.0")
    record = _rollout(store, [_stage("canary", canary), _stage("prod", 'labels.tier="prod"')])
    counts = {stage["name"]: {field: stage[field] for field in (
        "clusters", "done", "ready", "blocked", "behind")} for stage in record["status"]["stages"]}
    expected_canary = {"clusters": 5, "done": 2, "ready": 1, "blocked": 1, "behind": 1} \
        if canary.startswith("labels") else \
        {"clusters": 4, "done": 1, "ready": 1, "blocked": 1, "behind": 1}
    assert counts["canary"] == expected_canary
    prod = {"clusters": 1, "done": 0, "ready": 0, "blocked": 0, "behind": 1} \
        if canary.startswith("labels") else \
        {"clusters": 2, "done": 1, "ready": 0, "blocked": 0, "behind": 1}
    assert counts["prod"] == prod
    assert record["status"]["unstaged"] == 1  # `other`
    doc = store.rollouts.find_doc("wave")
    counted, unstaged = store.rollouts.count(doc)
    assert (counted["canary"], counted["prod"], unstaged) == (expected_canary, prod, 1)


def _counted(store, name="wave"):
    counted, unstaged = store.rollouts.count(store.rollouts.find_doc(name))
    return counted, unstaged


def test_a_count_reads_each_clusters_stored_standing(store, fleet, clock):
    """What a cluster's state is counted from: the one field its store keeps
    (`1.31 passing`), not the three it is made of."""
    _cluster(store, "a", "1.30.0")
    _rollout(store, [_stage("all")])
    assert _counted(store)[0]["all"]["behind"] == 1
    store.clusters.collection.update_one({"_id": "a"},
                                         {"$set": {ROLLOUT_STANDING_FIELD: "1.31 passing"}})
    assert _counted(store)[0]["all"] == {"clusters": 1, "done": 0, "ready": 1, "blocked": 0,
                                         "behind": 0}


@pytest.mark.parametrize("stages", [
    [{"name": "canary", "filter": 'labels.wave="canary"'}, {"name": "rest", "filter": ""}],
    # a filter on names: each stage a facet of one pass
    [{"name": "canary", "filter": 'name="can-*"'}, {"name": "rest", "filter": ""}]])
def test_clusters_with_no_standing_stored_are_counted_by_what_it_is_made_of(
        store, fleet, clock, stages):
    """Clusters written before the standing existed (until `create-indexes`
    stores theirs) are counted as the others are."""
    _cluster(store, "can-done", "1.32.0", wave="canary")
    _cluster(store, "can-ready", "1.31.2", ready=True, wave="canary")
    _cluster(store, "can-blocked", "1.31.2", wave="canary")
    _cluster(store, "behind", "1.29.0")
    _cluster(store, "ready", "1.31.0", ready=True)
    _rollout(store, [_stage(**stage) for stage in stages])
    before = _counted(store)
    assert before[0]["canary"]["clusters"] == 3 and before[0]["rest"]["ready"] == 1
    store.clusters.collection.update_many({"_id": {"$in": ["can-ready", "behind", "ready"]}},
                                          {"$unset": {ROLLOUT_STANDING_FIELD: ""}})
    assert _counted(store) == before
    # nor one that is not a string (not one the store writes): no failure
    store.clusters.collection.update_one({"_id": "ready"}, {"$set": {ROLLOUT_STANDING_FIELD: 5}})
    assert _counted(store) == before


@pytest.mark.parametrize("settle", ["settle_in_turns", "create_indexes"])  # the start's; the release step
def test_standings_set_right_with_no_event_are_counted_at_the_next_read_and_look(
        store, fleet, clock, settle):
    """The pass that sets standings right writes no event: the rollouts'
    kept counts are counted again at the next read all the same, and the
    advancer looks at once."""
    _cluster(store, "a", "1.31.0", ready=True)
    store.clusters.collection.update_one({"_id": "a"}, {"$set": {  # as the release before left it
        ROLLOUT_STANDING_FIELD: "1.30 unknown"}})
    for name in ("wave", "later"):
        assert _rollout(store, [_stage("all")], name=name)["status"]["stages"][0]["behind"] == 1
    assert store.rollouts.look_due() == 2  # their creations' events
    clock.advance(seconds=LOOK_SECONDS + 1)
    assert store.rollouts.look_due() == 0  # nothing changed since
    getattr(store, settle)()
    assert store.clusters.settle_in_turns() == 0  # set right
    assert store.rollouts.get("wave")["status"]["stages"][0]["ready"] == 1  # the read
    assert store.rollouts.look_due() == 1  # `later`, at once
    assert _states(store.rollouts.get("later")) == {"all": "open"}
    assert store.rollouts.get("later")["status"]["stages"][0]["ready"] == 1


def test_a_rollout_counts_only_its_organizations_clusters(store, fleet, clock):
    _cluster(store, "mine", "1.32.0")
    other = store.organizations.create({"title": "Other", "description": ""}, "t")
    store.platforms.create({"name": "theirs", "organization": other["id"], **PLATFORM}, "t")
    store.clusters.create({"name": "theirs-1", "platform": "theirs", "environment": "dev",
                           "version": "1.30.0", "labels": {}}, "t")
    scoped = store.rollouts.create({"name": "mine", "title": "", "target": "1.32",
                                    "stages": [_stage("all")]}, "t", scope=fleet["id"])
    assert scoped["status"]["stages"][0]["clusters"] == 1
    everyone = _rollout(store, [_stage("all")], name="everyone")
    assert everyone["status"]["stages"][0]["clusters"] == 2


def test_the_first_stage_opens_at_creation_and_the_next_once_it_completes(store, fleet, clock):
    _cluster(store, "c1", "1.31.2", wave="canary")
    record = _rollout(store, [_stage("canary", 'labels.wave="canary"'), _stage("rest")])
    assert _states(record) == {"canary": "open", "rest": "waiting"}
    assert record["status"]["stages"][0]["opened_on"] == "2026-11-27T12:00:00.000Z"
    assert record["status"]["state"] == "active"
    clock.advance(minutes=5)
    store.clusters.update("c1", {"version": "1.32.0"}, "t")
    record = store.rollouts.get("wave")
    # rest has no clusters: its turn comes and it completes at once
    assert _states(record) == {"canary": "complete", "rest": "complete"}
    assert record["status"]["stages"][0]["completed_on"] == "2026-11-27T12:05:00.000Z"
    assert record["status"]["state"] == "complete"


def test_progress_only_moves_forward(store, fleet, clock):
    _cluster(store, "c1", "1.32.0")
    _cluster(store, "c2", "1.30.0", tier="late")
    record = _rollout(store, [_stage("first", 'name="c1"'), _stage("late")])
    assert _states(record) == {"first": "complete", "late": "open"}
    store.clusters.update("c1", {"version": "1.31.0"}, "t")  # went back
    assert _states(store.rollouts.get("wave")) == {"first": "complete", "late": "open"}


def test_a_soak_holds_the_next_stage_until_it_ends_and_a_look_ends_it(store, fleet, clock):
    _cluster(store, "c1", "1.32.0")
    record = _rollout(store, [_stage("first", soak="PT1H"), _stage("second", 'name="x"')])
    assert _states(record) == {"first": "soaking", "second": "waiting"}
    assert record["status"]["stages"][0]["soak_ends_on"] == "2026-11-27T13:00:00.000Z"
    clock.advance(minutes=59)
    store.rollouts.look_due()
    assert _states(store.rollouts.get("wave"))["first"] == "soaking"
    clock.advance(minutes=1)
    assert store.rollouts.look_due() == 1  # its soak's end: due with no change written
    stored = store.rollouts.to_api(store.rollouts.find_doc("wave"))  # as a list shows it
    assert _states(stored) == {"first": "complete", "second": "complete"}


def test_a_paused_rollout_gives_no_stage_its_turn(store, fleet, clock):
    _cluster(store, "c1", "1.30.0")
    record = _rollout(store, [_stage("all")], paused=True)
    assert _states(record) == {"all": "waiting"} and record["status"]["state"] == "paused"
    resumed = store.rollouts.update("wave", {"paused": False}, "t")
    assert _states(resumed) == {"all": "open"} and resumed["status"]["state"] == "active"


def test_a_held_stage_opens_when_approved_by_whom_and_when(store, fleet, clock):
    _cluster(store, "c1", "1.30.0")
    record = _rollout(store, [_stage("gate", approval=True)])
    assert _states(record) == {"gate": "held"}
    with pytest.raises(InvalidField) as refused:
        store.rollouts.approve("wave", "nope", "approver")
    assert refused.value.field == "stage"
    clock.advance(minutes=1)
    approved = store.rollouts.approve("wave", "gate", "approver")
    stage = approved["status"]["stages"][0]
    assert (stage["state"], stage["approved_by"], stage["approved_on"], stage["opened_on"]) == (
        "open", "approver", "2026-11-27T12:01:00.000Z", "2026-11-27T12:01:00.000Z")
    assert approved["last_modified_by"] == "approver"
    with pytest.raises(NotNow):  # open now, not held
        store.rollouts.approve("wave", "gate", "approver")
    with pytest.raises(NotFound):
        store.rollouts.approve("missing", "gate", "approver")


def test_a_stage_changing_state_is_one_rollout_updated_event_with_its_changes(
        store, fleet, clock):
    _cluster(store, "c1", "1.31.0")
    _rollout(store, [_stage("first"), _stage("second", 'name="none"')])
    before = len(_rollout_events(store))
    store.clusters.update("c1", {"version": "1.32.0"}, "t")
    stale = store.rollouts.find_doc("wave")
    store.rollouts.progressed(stale)
    store.rollouts.progressed(stale)  # read before the write: reads again, moves nothing
    store.rollouts.get("wave")
    (event,) = _rollout_events(store)[before:]
    assert event["actor"] == "system"
    assert event["changes"] == {
        "status.stages.first.state": {"from": "open", "to": "complete"},
        "status.stages.second.state": {"from": "waiting", "to": "complete"},
        "status.state": {"from": "active", "to": "complete"}}


def test_look_due_looks_at_a_changed_rollout_once(store, fleet, clock):
    _cluster(store, "c1", "1.30.0")
    _cluster(store, "c2", "1.30.0")
    _rollout(store, [_stage("first", 'labels.wave="canary"'), _stage("rest")])
    clock.advance(seconds=5)
    store.rollouts.look_due()  # its own `created` event came after its counts
    clock.advance(seconds=5)
    assert store.rollouts.look_due() == 0  # nothing changed, no soak: not due
    store.clusters.update("c2", {"labels": {"wave": "canary"}}, "t")
    clock.advance(seconds=5)
    assert store.rollouts.look_due() == 1
    assert store.rollouts.look_due() == 0  # claimed and counted: not again
    stored = store.rollouts.to_api(store.rollouts.find_doc("wave"))
    assert stored["status"]["stages"][0]["clusters"] == 1
    assert stored["status"]["computed_on"] == "2026-11-27T12:00:15.000Z"
    # a change within LOOK_SECONDS of the last look waits for them to pass
    store.clusters.update("c1", {"labels": {"wave": "canary"}}, "t")
    clock.advance(seconds=LOOK_SECONDS - 1)
    assert store.rollouts.look_due() == 0
    clock.advance(seconds=1)
    assert store.rollouts.look_due() == 1


def test_a_change_of_stages_is_counted_at_once(store, fleet, clock):
    _cluster(store, "c1", "1.30.0", wave="canary")
    record = _rollout(store, [_stage("first", 'name="none"'), _stage("second", 'name="x"')])
    assert record["status"]["unstaged"] == 1
    changed = store.rollouts.update("wave", {"stages": [_stage("first", 'name="c1"')]}, "t")
    assert changed["status"]["stages"][0]["clusters"] == 1
    assert changed["status"]["unstaged"] == 0


def test_the_etag_carries_the_counts_and_if_match_compares_the_stored_part(store, fleet, clock):
    _cluster(store, "c1", "1.30.0")
    record = _rollout(store, [_stage("all", soak="PT1H")])
    _cluster(store, "c2", "1.30.0")
    recounted = store.rollouts.get("wave")
    stored, _, counts = recounted.revision.partition("-")
    assert record.revision.split("-")[0] == stored and record.revision != recounted.revision
    changed = store.rollouts.update("wave", {"title": "Wave"}, "t",
                                    revisions=[recounted.revision])
    assert changed["title"] == "Wave"
    with pytest.raises(StaleRevision):
        store.rollouts.update("wave", {"title": "Again"}, "t", revisions=[record.revision])


def test_a_rollout_that_went_away_is_not_found(store, fleet, clock):
    _rollout(store, [_stage("all")])
    doc = store.rollouts.find_doc("wave")
    store.rollouts.delete("wave")
    with pytest.raises(NotFound):
        store.rollouts.progressed(doc)
    with pytest.raises(NotFound):
        store.rollouts.get("wave")
