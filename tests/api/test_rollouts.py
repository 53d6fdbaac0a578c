"""Rollouts through HTTP: membership, each cluster state's boundaries, the
stages' progress (turns, soak on a controlled clock, approval, pause, only
forward), scope and roles, events, the Argo CD generator's rollout, the
clusters list, and bad bodies' 422s at their location."""
import threading
from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import assert_problem, client_with
from tests.support.clocks import Clock

CLEAN = {"agent": {"name": "inventory-agent", "version": "1.0.0"},
         "deprecated_api_requests": [], "findings": []}


@pytest.fixture
def clock(store):
    clock = Clock()
    store.rollouts.clock = clock
    return clock


def _token(client, role, organization=None):
    return client.post("/tokens", json={"name": role, "role": role,
                                        "organization": organization}).get_json()["token"]


def scan(client, cluster, server, readiness="passing", scanned_on=1000):
    """A scan that observes `server` as the API server's version, and
    leaves the cluster's readiness `readiness` (passing, warning, error)."""
    requests = {"passing": [], "warning": [
        {"group": "x.k8s.io", "version": "v1beta1", "resource": "things",
         "removed_release": _next_minor(server, 2), "requests": 1}], "error": [
        {"group": "x.k8s.io", "version": "v1beta1", "resource": "things",
         "removed_release": _next_minor(server, 1), "requests": 1}]}[readiness]
    body = {**CLEAN, "scanned_on": scanned_on, "server": {"git_version": f"v{server}"},
            "nodes": {"count": 1, "kubelet_versions": {f"v{server}": 1},
                      "kube_proxy_versions": {f"v{server}": 1}},
            "deprecated_api_requests": requests}
    response = client.post(f"/kubeclusters/{cluster}/scans", json=body)
    assert response.status_code == 201, response.get_json()
    assert client.get(f"/kubeclusters/{cluster}").get_json()["readiness"]["status"] == readiness


def _next_minor(version, by):
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + by}"


def make(client, name="wave", stages=None, **fields):
    body = {"name": name, "target": "1.32", "stages": stages or [
        {"name": "canary", "filter": 'labels.wave="canary"'},
        {"name": "rest", "filter": ""}], **fields}
    response = client.post("/rollouts", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def status(client, name="wave"):
    response = client.get(f"/rollouts/{name}")
    assert response.status_code == 200, response.get_json()
    return response.get_json()["status"]


def stage(client, stage_name, name="wave"):
    return next(s for s in status(client, name)["stages"] if s["name"] == stage_name)


def states(client, name="wave"):
    return {s["name"]: s["state"] for s in status(client, name)["stages"]}


# -- membership -------------------------------------------------------------

def test_a_cluster_belongs_to_the_first_stage_that_matches_it_and_membership_is_live(
        client, inventory, clock):
    platform = inventory.platform()["name"]
    inventory.cluster(platform=platform, name="a", labels={"wave": "canary"})
    inventory.cluster(platform=platform, name="b", labels={"wave": "canary"},
                      environment="staging")
    inventory.cluster(platform=platform, name="c", environment="staging")
    inventory.cluster(platform=platform, name="d", environment="production")
    make(client, stages=[{"name": "canary", "filter": 'labels.wave="canary"'},
                         {"name": "staging", "filter": 'environment="staging"'}])
    counts = {s["name"]: s["clusters"] for s in status(client)["stages"]}
    # b matches both: the first stage has it
    assert counts == {"canary": 2, "staging": 1}
    assert status(client)["unstaged"] == 1
    rows = client.get("/rollouts/wave/clusters").get_json()["results"]
    assert [(row["cluster"], row["stage"]) for row in rows] == [
        ("a", "canary"), ("b", "canary"), ("c", "staging")]
    # live: a new cluster, a changed label, a deleted cluster
    inventory.cluster(platform=platform, name="e", environment="staging")
    client.patch("/kubeclusters/b", json={"labels": {"wave": None}})
    assert client.delete("/kubeclusters/a").status_code == 204
    client.patch("/kubeclusters/d", json={"labels": {"wave": "canary"}})
    counts = {s["name"]: s["clusters"] for s in status(client)["stages"]}
    assert counts == {"canary": 1, "staging": 3}
    assert status(client)["unstaged"] == 0


# -- a cluster's state --------------------------------------------------------

@pytest.mark.parametrize("version, server, readiness, expected", [
    ("1.32.0", None, None, "done"),  # recorded minor = T
    ("1.33.1", None, None, "done"),  # recorded minor > T
    ("1.31.2", "1.32.1", "passing", "done"),  # the observed minor wins over the recorded
    ("1.31.2", "1.31.2", "passing", "ready"),  # T-1 and passing
    ("1.31.2", "1.31.2", "warning", "ready"),  # T-1 and warning
    ("1.31.2", "1.31.2", "error", "blocked"),  # T-1 and error
    ("1.31.2", None, None, "blocked"),  # T-1 and unknown (never scanned)
    ("1.30.2", "1.31.2", "error", "blocked"),  # observed T-1: readiness for 1.31 -> error
    ("1.30.9", "1.30.9", "passing", "behind"),  # T-2, however ready for its own next
    ("1.32.0", "1.30.4", "passing", "behind"),  # the observed minor wins over the recorded
])
def test_each_cluster_state_boundary(client, inventory, clock, version, server, readiness,
                                     expected):
    cluster = inventory.cluster(version=version)["name"]
    if server is not None:
        if version.split(".")[:2] != server.split(".")[:2]:
            # a recorded minor the server contradicts is an error of its own
            body = {**CLEAN, "scanned_on": 1000, "server": {"git_version": f"v{server}"}}
            assert client.post(f"/kubeclusters/{cluster}/scans", json=body).status_code == 201
        else:
            scan(client, cluster, server, readiness)
    make(client, stages=[{"name": "all", "filter": ""}])
    counts = stage(client, "all")
    assert counts["clusters"] == 1
    assert {state: counts[state] for state in ("done", "ready", "blocked", "behind")
            if counts[state]} == {expected: 1}
    (row,) = client.get("/rollouts/wave/clusters").get_json()["results"]
    assert row["state"] == expected


# -- progress -----------------------------------------------------------------

def test_the_first_stage_opens_at_creation_and_the_next_when_it_completes(
        client, inventory, clock):
    canary = inventory.cluster(name="canary-1", version="1.31.2", labels={"wave": "canary"})
    inventory.cluster(name="other", version="1.31.2")
    made = make(client)
    assert [s["state"] for s in made["status"]["stages"]] == ["open", "waiting"]
    assert made["status"]["stages"][0]["opened_on"] == "2026-11-27T12:00:00.000Z"
    clock.advance(minutes=5)
    assert states(client) == {"canary": "open", "rest": "waiting"}
    client.patch(f"/kubeclusters/{canary['name']}", json={"version": "1.32.0"})
    read = status(client)
    assert [s["state"] for s in read["stages"]] == ["complete", "open"]  # PT0S soak
    assert read["stages"][0]["completed_on"] == read["stages"][1]["opened_on"] == \
        "2026-11-27T12:05:00.000Z"
    assert read["state"] == "active"


def test_a_stage_with_no_clusters_completes_when_its_turn_comes(client, inventory, clock):
    inventory.cluster(name="only", version="1.31.2")
    made = make(client, stages=[{"name": "empty", "filter": 'environment="nowhere"',
                                 "soak": "P1D"},
                                {"name": "rest", "filter": ""}])
    assert [s["state"] for s in made["status"]["stages"]] == ["complete", "open"]


def test_soak_runs_from_the_moment_the_last_cluster_is_done_to_its_end(
        client, inventory, clock):
    first = inventory.cluster(name="c1", version="1.31.2", labels={"wave": "canary"})["name"]
    second = inventory.cluster(name="c2", version="1.31.2", labels={"wave": "canary"})["name"]
    inventory.cluster(name="r1", version="1.31.2")
    make(client, stages=[{"name": "canary", "filter": 'labels.wave="canary"', "soak": "PT6H"},
                         {"name": "rest", "filter": ""}])
    client.patch(f"/kubeclusters/{first}", json={"version": "1.32.0"})
    clock.advance(hours=1)
    assert states(client) == {"canary": "open", "rest": "waiting"}  # one not done yet
    client.patch(f"/kubeclusters/{second}", json={"version": "1.32.1"})
    clock.advance(minutes=1)
    read = stage(client, "canary")
    assert read["state"] == "soaking"
    assert read["soak_ends_on"] == "2026-11-27T19:01:00.000Z"
    clock.now = datetime(2026, 11, 27, 19, 0, 59, 999000, tzinfo=timezone.utc)
    assert states(client) == {"canary": "soaking", "rest": "waiting"}
    clock.now = datetime(2026, 11, 27, 19, 1, tzinfo=timezone.utc)
    assert states(client) == {"canary": "complete", "rest": "open"}


def test_a_soak_that_ends_while_nobody_reads_is_advanced_by_the_background_look(
        client, store, inventory, clock):
    inventory.cluster(name="c1", version="1.32.0", labels={"wave": "canary"})
    made = make(client, stages=[{"name": "canary", "filter": 'labels.wave="canary"',
                                 "soak": "PT1H"}, {"name": "rest", "filter": ""}])
    assert [s["state"] for s in made["status"]["stages"]] == ["soaking", "waiting"]
    clock.advance(minutes=59)
    assert store.rollouts.look_due() == 1
    listed = client.get("/rollouts").get_json()["results"][0]  # a list looks at nothing
    assert [s["state"] for s in listed["status"]["stages"]] == ["soaking", "waiting"]
    clock.advance(minutes=1)
    assert store.rollouts.look_due() == 1
    listed = client.get("/rollouts").get_json()["results"][0]
    assert [s["state"] for s in listed["status"]["stages"]] == ["complete", "complete"]
    assert listed["status"]["state"] == "complete"
    clock.advance(hours=1)
    assert store.rollouts.look_due() == 0  # complete: never looked at again


def test_progress_only_moves_forward(client, inventory, clock):
    platform = inventory.platform()["name"]
    inventory.cluster(platform=platform, name="c1", version="1.32.0",
                      labels={"wave": "canary"})
    inventory.cluster(platform=platform, name="r1", version="1.31.2")
    make(client, stages=[{"name": "canary", "filter": 'labels.wave="canary"', "soak": "PT1H"},
                         {"name": "rest", "filter": ""}])
    assert states(client) == {"canary": "soaking", "rest": "waiting"}
    # a cluster that is not done joins the soaking stage: it soaks on
    inventory.cluster(platform=platform, name="c2", version="1.30.1", labels={"wave": "canary"})
    clock.advance(hours=1)
    assert states(client) == {"canary": "complete", "rest": "open"}
    inventory.cluster(platform=platform, name="c3", version="1.30.1", labels={"wave": "canary"})
    read = stage(client, "canary")
    assert read["state"] == "complete" and read["behind"] == 2  # its counts stay live
    # an open stage stays open even when its stage filter no longer matches anyone
    client.patch("/rollouts/wave", json={"stages": [
        {"name": "canary", "filter": 'labels.wave="canary"'},
        {"name": "rest", "filter": 'environment="nowhere"'}]})
    assert states(client) == {"canary": "complete", "rest": "complete"}  # empty: completes


def test_pause_stops_turns_but_open_stages_stay_open(client, inventory, clock):
    canary = inventory.cluster(name="c1", version="1.31.2", labels={"wave": "canary"})["name"]
    inventory.cluster(name="r1", version="1.31.2")
    make(client)
    response = client.patch("/rollouts/wave", json={"paused": True})
    assert response.get_json()["status"]["state"] == "paused"
    assert states(client) == {"canary": "open", "rest": "waiting"}
    client.patch(f"/kubeclusters/{canary}", json={"version": "1.32.0"})
    assert states(client) == {"canary": "complete", "rest": "waiting"}  # no turn while paused
    response = client.patch("/rollouts/wave", json={"paused": False})
    assert [s["state"] for s in response.get_json()["status"]["stages"]] == ["complete", "open"]


# -- approval -----------------------------------------------------------------

def test_a_held_stage_opens_when_a_writer_approves_it(app, client, inventory, clock):
    org = inventory.org()["id"]
    platform = inventory.platform(org=org)["name"]
    inventory.cluster(platform=platform, name="c1", version="1.31.2")
    make(client, organization=org, stages=[
        {"name": "first", "filter": 'name="nothing"'},
        {"name": "gated", "filter": "", "approval": True},
        {"name": "last", "filter": "", "approval": True}])
    assert states(client) == {"first": "complete", "gated": "held", "last": "waiting"}
    reader = client_with(app, _token(client, "reader", org))
    assert_problem(reader.post("/rollouts/wave:approve", json={"stage": "gated"}), 403)
    assert states(client) == {"first": "complete", "gated": "held", "last": "waiting"}
    # a stage that is not held: 409; no such stage: 422 at body.stage
    for name in ("first", "last"):
        assert_problem(client.post("/rollouts/wave:approve", json={"stage": name}), 409)
    assert_problem(client.post("/rollouts/wave:approve", json={"stage": "nope"}), 422,
                   "body.stage")
    assert_problem(client.post("/rollouts/wave:approve", json={}), 422, "body.stage")
    writer = client_with(app, _token(client, "writer", org))
    clock.advance(minutes=3)
    response = writer.post("/rollouts/wave:approve", json={"stage": "gated"})
    assert response.status_code == 200, response.get_json()
    gated = response.get_json()["status"]["stages"][1]
    assert gated["state"] == "open" and gated["approved_by"] == "writer"
    assert gated["approved_on"] == gated["opened_on"] == "2026-11-27T12:03:00.000Z"
    assert response.headers["ETag"] == client.get("/rollouts/wave").headers["ETag"]
    assert_problem(writer.post("/rollouts/wave:approve", json={"stage": "gated"}), 409)
    (approved,) = client.get("/events", query_string={
        "filter": 'changed="status.stages.gated.state"'}).get_json()["results"][-1:]
    assert approved["actor"] == "writer"
    assert approved["changes"]["status.stages.gated.state"] == {"from": "held", "to": "open"}


@pytest.mark.parametrize("method", ["get", "patch", "delete", "put"])
def test_an_approval_taken_by_another_method_is_405_not_a_bad_name(client, inventory, method):
    """`/rollouts/wave:approve` is the approval's URL: the rollout's own
    route matches it too (its key would take `wave:approve`), but another
    method there is a 405 naming POST, not a 422 about the rollout's name,
    and changes nothing."""
    inventory.cluster(name="c1", version="1.31.2")
    make(client, stages=[{"name": "gated", "filter": "", "approval": True}])
    def record():  # as stored: its counts are made at each read
        body = client.get("/rollouts/wave").get_json()
        body["status"].pop("computed_on")
        return body
    before = record()
    answer = getattr(client, method)("/rollouts/wave:approve", json={"stage": "gated"})
    assert_problem(answer, 405)
    assert set(answer.headers["Allow"].split(", ")) == {"POST", "OPTIONS"}
    assert record() == before
    assert client.options("/rollouts/wave:approve").headers["Allow"] == "OPTIONS, POST"


def test_an_approval_while_paused_opens_the_stage_once_resumed(client, inventory, clock):
    inventory.cluster(name="c1", version="1.31.2")
    make(client, paused=True, stages=[{"name": "gated", "filter": "", "approval": True}])
    # paused from the start: the first stage's turn has not come
    assert states(client) == {"gated": "waiting"}
    client.patch("/rollouts/wave", json={"paused": False})
    assert states(client) == {"gated": "held"}
    client.patch("/rollouts/wave", json={"paused": True})
    assert client.post("/rollouts/wave:approve", json={"stage": "gated"}).status_code == 200
    assert states(client) == {"gated": "held"}
    client.patch("/rollouts/wave", json={"paused": False})
    assert states(client) == {"gated": "open"}


# -- events -------------------------------------------------------------------

def test_a_stage_changing_state_is_the_rollouts_updated_event_with_that_change(
        client, inventory, clock):
    canary = inventory.cluster(name="c1", version="1.31.2", labels={"wave": "canary"})["name"]
    inventory.cluster(name="r1", version="1.31.2")
    make(client)
    client.patch(f"/kubeclusters/{canary}", json={"version": "1.32.0"})
    status(client)
    status(client)  # a second look that moves nothing is no event
    events = client.get("/events", query_string={
        "filter": 'type="rollout.updated" AND changed="status.stages.canary.state"'}
    ).get_json()["results"]
    assert len(events) == 1
    changes = {field: (change["from"], change["to"])
               for field, change in events[0]["changes"].items()}
    assert changes == {"status.stages.canary.state": ("open", "complete"),
                       "status.stages.rest.state": ("waiting", "open")}
    assert events[0]["subject"] == "/rollouts/wave"
    assert events[0]["actor"] == "system"  # the service's change, though a read brought it
    assert events[0]["object"]["status"]["stages"][1]["state"] == "open"
    types = [event["type"] for event in client.get(
        "/events", query_string={"filter": 'type="rollout.*"'}).get_json()["results"]]
    assert types == ["rollout.created", "rollout.updated"]


def test_processes_that_look_at_once_move_a_stage_once(client, store, inventory, clock):
    """Many threads look at the same due rollouts at the same moment (as
    several workers would): each stage's change is one event, many rounds."""
    inventory.cluster(name="c1", version="1.32.0", labels={"wave": "canary"})
    for round_ in range(20):
        name = f"wave-{round_}"
        make(client, name=name, stages=[
            {"name": "canary", "filter": 'labels.wave="canary"', "soak": "PT1M"},
            {"name": "rest", "filter": 'name="nothing"'}])
        clock.advance(minutes=1)
        start = threading.Barrier(4)

        def look():
            start.wait()
            store.rollouts.look_due()
        threads = [threading.Thread(target=look) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        events = client.get("/events", query_string={
            "filter": f'type="rollout.updated" AND subject="/rollouts/{name}"'}
        ).get_json()["results"]
        assert len(events) == 1, events
        assert set(events[0]["changes"]) == {
            "status.stages.canary.state", "status.stages.rest.state", "status.state"}


def test_a_stale_look_rereads_and_does_not_apply_twice(client, store, inventory, clock):
    inventory.cluster(name="c1", version="1.32.0")
    make(client, stages=[{"name": "all", "filter": "", "soak": "PT1M"}])
    stale = store.rollouts.collection.find_one({"_id": "wave"})
    clock.advance(minutes=1)
    store.rollouts.progressed(stale)
    store.rollouts.progressed(stale)  # its revision is gone: it reads again, moves nothing
    events = client.get("/events", query_string={"filter": 'type="rollout.updated"'}
                        ).get_json()["results"]
    assert len(events) == 1


# -- scope, roles, ETags --------------------------------------------------------

def test_a_scoped_caller_sees_only_its_organizations_rollouts_and_clusters(
        app, client, inventory, clock):
    mine, theirs = inventory.org(title="Mine")["id"], inventory.org(title="Theirs")["id"]
    inventory.cluster(platform=inventory.platform(org=mine)["name"], name="m1")
    inventory.cluster(platform=inventory.platform(org=theirs)["name"], name="t1")
    writer = client_with(app, _token(client, "writer", mine))
    made = make(writer, name="mine", stages=[{"name": "all", "filter": ""}])
    assert made["organization"] == mine
    assert made["status"]["stages"][0]["clusters"] == 1  # its organization's only
    make(client, name="theirs", organization=theirs, stages=[{"name": "all", "filter": ""}])
    fleet = make(client, name="fleet", stages=[{"name": "all", "filter": ""}])
    assert fleet["organization"] is None and fleet["status"]["stages"][0]["clusters"] == 2
    listed = [r["name"] for r in writer.get("/rollouts").get_json()["results"]]
    assert listed == ["mine"]
    for name in ("theirs", "fleet"):
        assert_problem(writer.get(f"/rollouts/{name}"), 404)
        assert_problem(writer.get(f"/rollouts/{name}/clusters"), 404)
        assert_problem(writer.post(f"/rollouts/{name}:approve", json={"stage": "all"}), 404)
    assert_problem(writer.post("/rollouts", json={
        "name": "x", "target": "1.32", "organization": theirs,
        "stages": [{"name": "all", "filter": ""}]}), 403)
    # only an unscoped admin makes a fleet-wide rollout
    unscoped_writer = client_with(app, _token(client, "writer"))
    assert_problem(unscoped_writer.post("/rollouts", json={
        "name": "x", "target": "1.32", "stages": [{"name": "all", "filter": ""}]}), 422,
        "body.organization")
    reader = client_with(app, _token(client, "reader", mine))
    assert_problem(reader.post("/rollouts", json={
        "name": "x", "target": "1.32", "stages": [{"name": "all", "filter": ""}]}), 403)
    assert_problem(reader.patch("/rollouts/mine", json={"paused": True}), 403)
    assert reader.get("/rollouts/mine").status_code == 200


def test_if_match_and_immutable_fields(client, inventory, clock):
    made = client.post("/rollouts", json={"name": "wave", "target": "1.32",
                                          "stages": [{"name": "all", "filter": ""}]})
    etag = made.headers["ETag"]
    assert client.patch("/rollouts/wave", json={"title": "First"},
                        headers={"If-Match": etag}).status_code == 200
    assert_problem(client.patch("/rollouts/wave", json={"title": "Again"},
                                headers={"If-Match": etag}), 412)
    assert_problem(client.patch("/rollouts/wave", json={"target": "1.33"}), 422, "body.target")
    current = client.get("/rollouts/wave")
    assert client.get("/rollouts/wave", headers={"If-None-Match": current.headers["ETag"]}
                      ).status_code == 304
    assert client.delete("/rollouts/wave",
                         headers={"If-Match": current.headers["ETag"]}).status_code == 204
    assert_problem(client.get("/rollouts/wave"), 404)


def test_the_organizations_quota_counts_its_rollouts(client, inventory, clock):
    org = inventory.org(quotas={"rollouts": 1})["id"]
    make(client, name="one", organization=org)
    body = client.post("/rollouts", json={"name": "two", "target": "1.32", "organization": org,
                                          "stages": [{"name": "all", "filter": ""}]})
    assert_problem(body, 403)


# -- the clusters list and the generator ----------------------------------------

def test_the_clusters_list_pages_in_stage_order_filters_and_answers_csv(
        client, inventory, clock):
    platform = inventory.platform()["name"]
    for index in range(5):
        inventory.cluster(platform=platform, name=f"z{index}", version="1.30.1",
                          labels={"wave": "canary"})
        inventory.cluster(platform=platform, name=f"a{index}", version="1.32.0")
    make(client)
    pages, token, rows = 0, None, []
    while True:
        body = client.get("/rollouts/wave/clusters", query_string={
            "limit": 3, **({"continue": token} if token else {})}).get_json()
        rows += body["results"]
        pages += 1
        token = body["pagination"]["continue"]
        if not token:
            break
    assert [row["cluster"] for row in rows] == [f"z{i}" for i in range(5)] + \
        [f"a{i}" for i in range(5)]
    assert pages >= 4
    done = client.get("/rollouts/wave/clusters", query_string={
        "filter": 'state="done"'}).get_json()["results"]
    assert {row["cluster"] for row in done} == {f"a{i}" for i in range(5)}
    canary = client.get("/rollouts/wave/clusters", query_string={
        "filter": 'stage="canary" AND NOT state="done"'}).get_json()["results"]
    assert {(row["cluster"], row["state"]) for row in canary} == {
        (f"z{i}", "behind") for i in range(5)}
    assert_problem(client.get("/rollouts/wave/clusters", query_string={
        "filter": 'version="1.31"'}), 422, "query.filter")
    csv = client.get("/rollouts/wave/clusters", query_string={"format": "csv",
                                                               "filter": 'state="behind"'})
    assert csv.mimetype == "text/csv"
    lines = csv.get_data(True).splitlines()
    assert lines[0].startswith("cluster,stage,state,minor,readiness.status")
    assert len(lines) == 6


def test_the_generator_answers_the_ready_clusters_of_open_stages(client, inventory, clock):
    platform = inventory.platform()["name"]
    for name, labels, version, readiness in [
            ("c-ready", {"wave": "canary"}, "1.31.2", "passing"),
            ("c-warn", {"wave": "canary"}, "1.31.2", "warning"),
            ("c-blocked", {"wave": "canary"}, "1.31.2", "error"),
            ("c-done", {"wave": "canary"}, "1.32.1", "passing"),
            ("r-ready", {}, "1.31.2", "passing")]:
        inventory.cluster(platform=platform, name=name, version=version, labels=labels)
        scan(client, name, version, readiness)
    make(client)

    def generated(**parameters):
        response = client.post("/integrations/argocd/api/v1/getparams.execute", json={
            "applicationSetName": "upgrade", "input": {"parameters": parameters}})
        assert response.status_code == 200, response.get_json()
        return [(item["name"], item["stage"]) for item in
                response.get_json()["output"]["parameters"]]
    assert generated(rollout="wave") == [("c-ready", "canary"), ("c-warn", "canary")]
    assert generated(rollout="wave", filter='name="c-warn"') == [("c-warn", "canary")]
    for name in ("c-ready", "c-warn", "c-blocked"):
        client.patch(f"/kubeclusters/{name}", json={"version": "1.32.0"})
        scan(client, name, "1.32.0", scanned_on=2000)
    assert generated(rollout="wave") == [("r-ready", "rest")]
    response = client.post("/integrations/argocd/api/v1/getparams.execute", json={
        "applicationSetName": "upgrade", "input": {"parameters": {"rollout": "nope"}}})
    assert_problem(response, 422, "body.input.parameters.rollout")
    plain = client.post("/integrations/argocd/api/v1/getparams.execute", json={
        "applicationSetName": "all", "input": {"parameters": {}}}).get_json()
    assert all("stage" not in item for item in plain["output"]["parameters"])


# -- bad bodies -----------------------------------------------------------------

GOOD = {"name": "wave", "target": "1.32", "stages": [{"name": "all", "filter": ""}]}


@pytest.mark.parametrize("changes, location", [
    ({"name": "Not A Slug"}, "body.name"),
    ({"target": "1.32.0"}, "body.target"),
    ({"target": "v1.32"}, "body.target"),
    ({"target": None}, "body.target"),
    ({"stages": []}, "body.stages"),
    ({"stages": [{"name": f"s{i}", "filter": ""} for i in range(11)]}, "body.stages"),
    ({"stages": [{"name": "a", "filter": ""}, {"name": "b", "filter": 'nope="x"'}]},
     "body.stages.1.filter"),
    ({"stages": [{"name": "a", "filter": ""}, {"name": "b", "filter": 'name="x'}]},
     "body.stages.1.filter"),
    ({"stages": [{"name": "a", "filter": ""}, {"name": "a", "filter": ""}]},
     "body.stages.1.name"),
    ({"stages": [{"name": "a", "filter": "", "soak": "P31D"}]}, "body.stages.0.soak"),
    ({"stages": [{"name": "a", "filter": "", "soak": "P1M"}]}, "body.stages.0.soak"),
    ({"stages": [{"name": "a", "filter": "", "soak": "-PT1S"}]}, "body.stages.0.soak"),
    ({"stages": [{"name": "a", "filter": "", "approval": "yes"}]}, "body.stages.0.approval"),
    ({"stages": [{"name": "a"}]}, "body.stages.0.filter"),
    ({"stages": [{"filter": ""}]}, "body.stages.0.name"),
    ({"paused": "no"}, "body.paused"),
    ({"organization": "acme"}, "body.organization"),
])
def test_bad_parts_are_422_at_their_location(client, changes, location):
    assert_problem(client.post("/rollouts", json={**GOOD, **changes}), 422, location)
    assert_problem(client.get("/rollouts/wave"), 404)  # nothing was made


def test_a_bad_stage_in_a_change_is_422_at_its_location(client, clock):
    make(client, stages=[{"name": "all", "filter": ""}])
    assert_problem(client.patch("/rollouts/wave", json={"stages": [
        {"name": "a", "filter": ""}, {"name": "b", "filter": "labels.x.y=1"}]}), 422,
        "body.stages.1.filter")
    assert [s["name"] for s in client.get("/rollouts/wave").get_json()["stages"]] == ["all"]


# -- cost: counted once per change ----------------------------------------------

def test_the_advancer_counts_only_when_a_change_was_written_or_a_soak_ends(
        client, store, inventory, clock):
    """With nothing changed a look counts nothing (store.rollouts.counts_made,
    its public count of counts), however often it comes; a cluster's change
    is counted at the next look, and a soak's end brings its look."""
    inventory.cluster(name="c1", version="1.32.0", labels={"wave": "canary"})
    inventory.cluster(name="c2", version="1.30.0")
    make(client, stages=[{"name": "canary", "filter": 'labels.wave="canary"', "soak": "PT1H"},
                         {"name": "rest", "filter": ""}])
    clock.advance(seconds=1)
    store.rollouts.look_due()  # the rollout's own `created` event came after its count
    counted = store.rollouts.counts_made
    for _ in range(30):
        clock.advance(seconds=2)
        assert store.rollouts.look_due() == 0
    assert client.get("/rollouts/wave").status_code == 200  # a read of the same counts
    assert store.rollouts.counts_made == counted
    client.patch("/kubeclusters/c2", json={"labels": {"wave": "canary"}})
    clock.advance(seconds=1)
    assert store.rollouts.look_due() == 1
    assert store.rollouts.counts_made == counted + 1
    assert stage(client, "canary")["clusters"] == 2
    assert stage(client, "canary")["state"] == "soaking"  # only forward
    counted = store.rollouts.counts_made
    ends = datetime.fromisoformat(stage(client, "canary")["soak_ends_on"].replace("Z",
                                                                                  "+00:00"))
    while clock.now + timedelta(minutes=1) < ends:  # a quiet look each QUIET_SECONDS: no count
        clock.advance(minutes=1)
        store.rollouts.look_due()
    assert stage(client, "canary")["state"] == "soaking"
    clock.now = ends
    assert store.rollouts.look_due() == 1  # the soak ended: its look, with no change
    assert store.rollouts.counts_made == counted
    assert states(client) == {"canary": "complete", "rest": "complete"}  # rest: no cluster


def test_a_filter_on_a_time_back_from_now_is_counted_at_every_look(
        client, store, inventory, clock):
    inventory.cluster(name="c1", version="1.30.0")
    make(client, stages=[{"name": "recent", "filter": 'created_on>"-P1D"'}])
    clock.advance(seconds=1)
    store.rollouts.look_due()
    counted = store.rollouts.counts_made
    for _ in range(3):
        clock.advance(seconds=2)
        assert store.rollouts.look_due() == 1
    assert store.rollouts.counts_made == counted + 3


@pytest.mark.parametrize("extra", ['name>""', 'name:*'])
def test_counts_grouped_as_a_summary_equal_counts_cluster_by_cluster(
        client, inventory, clock, extra):
    """Filters on few-valued fields are counted by groups; a filter on a
    name is checked cluster by cluster: the same stages, either way, count
    the same (`AND name>""` holds for every cluster)."""
    platform = inventory.platform()["name"]
    for index in range(24):
        inventory.cluster(platform=platform, name=f"c{index}",
                          environment=("dev", "staging", "production")[index % 3],
                          version=f"1.{29 + index % 4}.{index % 5}",
                          labels={"team": f"team-{index % 5}"} if index % 7 else {})
    stages = [{"name": "canary", "filter": 'labels.team="team-1" OR labels.team="team-3*"'},
              {"name": "dev", "filter": 'environment="dev" AND NOT version>="1.31"'},
              {"name": "mid", "filter": 'environment!="production" AND labels.team<"team-3"'},
              {"name": "old", "filter": 'version<"1.31" OR NOT labels.team:*'},
              {"name": "rest", "filter": 'NOT environment="staging"'}]
    make(client, name="grouped", stages=stages)
    make(client, name="each", stages=[{**stage, "filter": f"({stage['filter']}) AND {extra}"}
                                      for stage in stages])
    grouped, each = status(client, "grouped"), status(client, "each")
    assert [s["clusters"] for s in grouped["stages"]] == [s["clusters"] for s in each["stages"]]
    assert grouped["stages"] == [{**s, "name": s["name"]} for s in each["stages"]]
    assert grouped["unstaged"] == each["unstaged"]
    assert sum(s["clusters"] for s in grouped["stages"]) + grouped["unstaged"] == 24


def test_a_fleet_that_changes_every_second_is_counted_every_look_seconds(
        client, store, inventory, clock):
    inventory.cluster(name="c1", version="1.30.0")
    make(client, stages=[{"name": "all", "filter": ""}])
    clock.advance(seconds=1)
    store.rollouts.look_due()
    looks = []
    for second in range(10):
        client.patch("/kubeclusters/c1", json={"labels": {"tick": f"t{second}"}})
        clock.advance(seconds=1)
        looks.append(store.rollouts.look_due())
    assert looks == [0, 1] * 5  # each change looked at, every LOOK_SECONDS (2 s)
