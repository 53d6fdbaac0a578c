"""The change feed: one event per accepted change and none for anything else,
tenancy, resuming, waiting, streaming, retention; and at the store, what
keeps it exact: outboxes swept after a writer dies, slots never passed while
empty, each record's events in the order of its changes."""
import threading
import time

import pytest

from app import create_app
from inventory.core.errors import Unavailable
from inventory.http.auth import Principal
from inventory.store import feed_slots as feed_module
from inventory.store.outbox import OUTBOX_SINCE
from tests.conftest import ADMIN_TOKEN, REAL_MONGO, assert_problem, client_with, make_config, walk

PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}


def feed(client, **params):
    response = client.get("/events", query_string=params)
    assert response.status_code == 200, response.get_json()
    return response.get_json()["results"]


def types(events):
    return [event["type"] for event in events]


def test_each_accepted_change_is_one_event_with_who_what_and_how(client, inventory):
    org = inventory.org(title="Acme")
    platform = inventory.platform(org=org["id"], name="eks-prod")
    cluster = inventory.cluster(platform="eks-prod", name="payments", labels={"team": "core"})
    inventory.scan("payments", scanned_on=1763800000)
    assert client.patch("/kubeclusters/payments",
                        json={"version": "1.32.0", "labels": {"team": None, "owner": "ops"}}
                        ).status_code == 200
    events = feed(client)
    assert types(events) == ["organization.created", "kubeplatform.created",
                             "kubecluster.created", "kubeclusterscan.created",
                             "kubecluster.updated"]
    assert all(e["actor"] == "admin" and e["organization"] == org["id"] for e in events)
    assert [e["subject"] for e in events[:3]] == [
        f"/organizations/{org['id']}", "/kubeplatforms/eks-prod", "/kubeclusters/payments"]
    assert events[3]["subject"].startswith("/kubeclusters/payments/scans/k8scs_")
    assert events[1]["object"] == {k: v for k, v in platform.items() if k != "$schema"}
    assert events[2]["object"]["id"] == cluster["id"]
    updated = events[4]
    current = client.get("/kubeclusters/payments").get_json()
    assert updated["object"] == {k: v for k, v in current.items() if k != "$schema"}
    assert updated["changes"] == {"labels.owner": {"from": None, "to": "ops"},
                                  "labels.team": {"from": "core", "to": None},
                                  "version": {"from": "1.31.2", "to": "1.32.0"}}
    ids = [e["id"] for e in events]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_an_events_changes_are_stored_without_dotted_keys(client, inventory, store):
    """A change's path (labels.owner) is never a document key: FerretDB
    refuses `.` in keys (the PATCH answered 500 there), and MongoDB's
    queries and updates cannot address such fields."""
    inventory.cluster(name="payments", labels={"team": "core"})
    assert client.patch("/kubeclusters/payments", json={"labels": {"owner": "ops"}}
                        ).status_code == 200

    def keys(value):
        if isinstance(value, dict):
            return [*value, *(k for v in value.values() for k in keys(v))]
        return [k for v in value for k in keys(v)] if isinstance(value, list) else []
    stored = store.events.collection.find({"type": "kubecluster.updated"})
    assert len(stored) == 1 and not [key for key in keys(stored[0]) if "." in key]
    assert feed(client)[-1]["changes"] == {"labels.owner": {"from": None, "to": "ops"}}


def test_a_forced_delete_is_one_event_per_record_it_removes_and_none_per_scan(client, inventory):
    org = inventory.org()["id"]
    inventory.platform(org=org, name="p1")
    inventory.cluster(platform="p1", name="c1")
    inventory.scan("c1")
    token = client.post("/tokens", json={"name": "bot", "role": "reader", "organization": org})
    assert token.status_code == 201
    start = feed(client)[-1]["id"]
    assert client.delete(f"/organizations/{org}?force=true").status_code == 204
    removed = feed(client, after=start)
    assert sorted(types(removed)) == sorted(["kubecluster.deleted", "kubeplatform.deleted",
                                             "token.deleted", "organization.deleted"])
    assert types(removed)[-1] == "organization.deleted"  # the parent after its children
    assert types(removed).index("kubecluster.deleted") < types(removed).index(
        "kubeplatform.deleted")


def test_a_token_event_never_holds_its_secret(client):
    made = client.post("/tokens", json={"name": "bot", "role": "reader"}).get_json()
    assert client.delete(f"/tokens/{made['id']}").status_code == 204
    events = feed(client, filter='type="token.*"')
    assert types(events) == ["token.created", "token.deleted"]
    for event in events:
        assert "token" not in event["object"] and "hash" not in event["object"]
        assert made["token"] not in str(event)


def test_refused_and_unchanged_requests_make_no_event(app, client, inventory, anonymous):
    platform = inventory.cluster(name="payments")["platform"]
    reader = client.post("/tokens", json={"name": "r", "role": "reader"}).get_json()["token"]
    before = feed(client)  # the token's own event
    etag = client.get("/kubeclusters/payments").headers["ETag"]
    assert client.patch("/kubeclusters/payments", json={"environment": "staging"}).status_code \
        == 200
    refused = [
        anonymous.post("/organizations", json={"title": "x"}),  # 401
        client_with(app, reader).post("/organizations", json={"title": "x"}),  # 403
        client.post("/organizations", json={"title": ""}),  # 422
        client.patch("/kubeclusters/payments", json={"environment": "dev"},
                     headers={"If-Match": etag}),  # 412
        client.post("/kubeclusters", json={"name": "payments", "platform": platform,
                                           "environment": "x", "version": "1.30"}),  # 409
        client.patch("/kubeclusters/payments", json={"environment": "staging"}),  # no change
    ]
    assert [r.status_code for r in refused] == [401, 403, 422, 412, 409, 200]
    assert types(feed(client, after=before[-1]["id"])) == ["kubecluster.updated"]


def test_an_idempotent_replay_makes_no_event(client):
    headers = {"Idempotency-Key": "once"}
    first = client.post("/organizations", json={"title": "Once"}, headers=headers)
    again = client.post("/organizations", json={"title": "Once"}, headers=headers)
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert first.get_json()["id"] == again.get_json()["id"]
    assert types(feed(client)) == ["organization.created"]


def test_a_scoped_token_sees_only_its_organizations_events(app, client, inventory):
    mine, theirs = inventory.org(title="Mine")["id"], inventory.org(title="Theirs")["id"]
    inventory.platform(org=mine, name="p-mine")
    inventory.platform(org=theirs, name="p-theirs")
    assert client.delete("/kubeplatforms/p-mine").status_code == 204
    secret = client.post("/tokens", json={"name": "mine", "role": "reader",
                                          "organization": mine}).get_json()["token"]
    scoped = client_with(app, secret)
    seen = feed(scoped)
    assert seen and all(event["organization"] == mine for event in seen)
    assert "kubeplatform.deleted" in types(seen)  # a deleted record's events too
    other = next(e for e in feed(client) if e["organization"] == theirs)
    assert_problem(scoped.get(f"/events/{other['id']}"), 404)
    assert scoped.get(f"/events/{seen[0]['id']}").status_code == 200


def test_resuming_after_an_id_gives_exactly_what_followed(client, inventory):
    for index in range(7):
        inventory.org(title=f"Org {index}")
    everything = feed(client, limit=100)
    assert len(everything) == 7
    assert feed(client, after=everything[2]["id"], limit=100) == everything[3:]
    collected, token = [], None
    while True:  # pages of 3, by continue
        params = {"limit": 3, **({"continue": token} if token else {})}
        body = client.get("/events", query_string=params).get_json()
        collected += body["results"]
        token = body["pagination"]["continue"]
        if not token:
            break
    assert collected == everything


def test_the_feed_filters_by_type_subject_and_actor(client, inventory):
    inventory.cluster(name="payments")
    inventory.cluster(name="ledger")
    assert client.patch("/kubeclusters/payments", json={"title": "Pay"}).status_code == 200
    history = feed(client, filter='subject="/kubeclusters/payments"')
    assert types(history) == ["kubecluster.created", "kubecluster.updated"]
    assert len(feed(client, filter='type="kubecluster.*"')) == 3
    assert feed(client, filter='actor="someone-else"') == []


@pytest.mark.parametrize("order_by", ["occurred_on desc", "id desc"])
def test_newest_first_is_the_feed_reversed_page_by_page(client, inventory, order_by):
    for index in range(7):
        inventory.org(title=f"O{index}")
    oldest_first = [event["id"] for event in feed(client, limit=100)]
    newest_first, token = [], ""
    while True:
        answer = client.get("/events", query_string={
            "order_by": order_by, "limit": 3, "continue": token}).get_json()
        newest_first += [event["id"] for event in answer["results"]]
        token = answer["pagination"]["continue"]
        if not token:
            break
    assert newest_first == oldest_first[::-1]
    titles = [event["object"]["title"] for event in feed(
        client, order_by=order_by, limit=2, filter='type="organization.created"')]
    assert titles == ["O6", "O5"]


def test_the_last_hour_is_one_request(client, inventory, store):
    inventory.org(title="Old")
    old = feed(client)[-1]
    # as if made two hours ago
    store.events.collection.update_one(
        {"_id": old["id"].removeprefix("evt_")},
        {"$set": {"occurred_on": "2000-01-01T00:00:00.000Z"}})
    inventory.org(title="New")
    recent = feed(client, filter='occurred_on>="-PT1H"', order_by="occurred_on desc")
    assert [event["object"]["title"] for event in recent] == ["New"]


def test_one_process_events_times_never_go_back_along_the_feed(app, client, inventory):
    """Writes of every kind at once from several threads of this process,
    round after round: scans (whose event is made before the cluster update
    they cause, and reaches the feed after it), cluster and platform
    changes, creates and deletes. Along the feed's order, oldest first and
    newest first, `occurred_on` never goes back."""
    threads, rounds = 4, 25
    platform = inventory.platform()["name"]
    clusters = [inventory.cluster(platform=platform)["name"] for _ in range(threads)]
    failures = []

    def write(index):
        own = client_with(app, ADMIN_TOKEN)
        cluster = clusters[index]
        try:
            for round_ in range(rounds):
                for method, path, body in (
                        ("post", f"/kubeclusters/{cluster}/scans", {}),
                        ("patch", f"/kubeclusters/{cluster}", {"labels": {"round": str(round_)}}),
                        ("post", f"/kubeclusters/{cluster}/scans", {}),
                        ("patch", f"/kubeplatforms/{platform}", {"title": f"{index}-{round_}"}),
                        ("post", "/organizations", {"title": f"T{index}-{round_}"})):
                    answer = getattr(own, method)(path, json=body)
                    assert answer.status_code in (200, 201), answer.get_json()
        except AssertionError as failure:
            failures.append(failure)
    workers = [threading.Thread(target=write, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not failures, failures[0]
    oldest_first, _ = walk(client, "/events", limit=100)
    kinds = {event["type"] for event in oldest_first}
    assert {"kubeclusterscan.created", "kubecluster.updated", "kubeplatform.updated",
            "organization.created"} <= kinds
    assert len(oldest_first) >= threads * rounds * 5
    times = [event["occurred_on"] for event in oldest_first]
    back = [(a["id"], a["type"], a["occurred_on"], b["id"], b["type"], b["occurred_on"])
            for a, b in zip(oldest_first, oldest_first[1:]) if b["occurred_on"] < a["occurred_on"]]
    assert not back, f"{len(back)} of {len(times)} go back: {back[:3]}"
    newest_first, _ = walk(client, "/events", limit=100, order_by="occurred_on desc")
    assert [event["id"] for event in newest_first] == [e["id"] for e in oldest_first][::-1]


@pytest.mark.parametrize("params, location", [
    ({"order_by": "occurred_on desc", "after": "evt_0000000000000001"}, "query.after"),
    ({"order_by": "id desc", "wait": 5}, "query.wait"),
    ({"order_by": "type"}, "query.order_by"),
    ({"after": "evt_xyz"}, "query.after"),
    ({"after": "evt_0000000000000001", "continue": "abc"}, "query.after"),
    ({"wait": 0}, "query.wait"),
    ({"wait": 61}, "query.wait"),
    ({"filter": 'colour="red"'}, "query.filter"),
    ({"continue": "forged"}, "query.continue"),
])
def test_bad_feed_arguments_are_422(client, params, location):
    assert_problem(client.get("/events", query_string=params), 422, location)


def test_an_id_older_than_the_oldest_kept_is_410(client, store, inventory):
    for index in range(3):
        inventory.org(title=f"Org {index}")
    first, second, third = feed(client)
    # what the retention's TTL does
    store.events.collection.delete_many({"_id": {"$lte": second["id"].removeprefix("evt_")}})
    assert_problem(client.get("/events", query_string={"after": first["id"]}), 410,
                   "query.after")
    streamed = client.get("/events", headers={"Accept": "text/event-stream",
                                              "Last-Event-ID": first["id"]})
    assert_problem(streamed, 410, "header.last-event-id")
    assert feed(client, after=third["id"]) == []


def test_a_wait_answers_when_an_event_is_committed(client, inventory):
    inventory.org(title="Before")
    last = feed(client)[-1]["id"]
    answer = {}

    def waiter():
        answer["events"] = feed(client, after=last, wait=20)
    thread = threading.Thread(target=waiter)
    thread.start()
    time.sleep(0.3)
    inventory.org(title="After")
    thread.join(timeout=20)
    assert types(answer["events"]) == ["organization.created"]
    assert answer["events"][0]["object"]["title"] == "After"


def test_a_wait_with_nothing_new_answers_empty_at_its_end(client, inventory):
    inventory.org()
    last = feed(client)[-1]["id"]
    began = time.monotonic()
    assert feed(client, after=last, wait=1) == []
    assert time.monotonic() - began >= 1


def _sse_events(chunks, count):
    """The first `count` events of a Server-Sent Events body: (id, type, data)."""
    import json
    found, buffer = [], b""
    for chunk in chunks:
        buffer += chunk
        while b"\n\n" in buffer:
            message, buffer = buffer.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in message.decode().splitlines()
                          if line and not line.startswith(":") and ": " in line)
            if "id" in fields:
                found.append((fields["id"], fields["event"], json.loads(fields["data"])))
                if len(found) == count:
                    return found
    return found


def test_a_stream_sends_events_and_resumes_after_last_event_id(client, inventory):
    for index in range(3):
        inventory.org(title=f"Org {index}")
    everything = feed(client)
    response = client.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
    assert response.status_code == 200 and response.mimetype == "text/event-stream"
    streamed = _sse_events(response.response, 3)
    response.close()
    assert [(i, t) for i, t, _ in streamed] == [(e["id"], e["type"]) for e in everything]
    assert streamed[0][2] == everything[0]
    resumed = client.get("/events", headers={"Accept": "text/event-stream",
                                             "Last-Event-ID": everything[0]["id"]},
                         buffered=False)
    assert [i for i, _, _ in _sse_events(resumed.response, 2)] == \
        [e["id"] for e in everything[1:]]
    resumed.close()


def test_past_the_streams_a_process_serves_a_stream_is_503(client, monkeypatch):
    from inventory.resources.events import views as events_api
    monkeypatch.setattr(events_api, "MAX_STREAMS", 1)
    first = client.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
    busy = client.get("/events", headers={"Accept": "text/event-stream"})
    assert_problem(busy, 503)
    assert busy.headers["Retry-After"]
    first.close()  # its slot is given back, read or not
    again = client.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
    assert again.status_code == 200
    again.close()


def test_a_stream_asked_while_the_database_is_away_is_a_503_problem(client, store,
                                                                     monkeypatch):
    """Not a 200 whose body then breaks: the first page is read before the
    answer begins. Its place in the share is given back."""
    from inventory.resources.events import views as events_api

    def away(*args, **kwargs):
        raise Unavailable()
    monkeypatch.setattr(events_api, "MAX_STREAMS", 1)
    with monkeypatch.context() as outage:
        outage.setattr(store.events, "page", away)
        refused = client.get("/events", headers={"Accept": "text/event-stream"})
    assert_problem(refused, 503)
    assert refused.headers["Retry-After"]
    again = client.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
    assert again.status_code == 200
    again.close()


def test_a_stream_whose_database_goes_away_ends_with_a_comment(client, store, inventory,
                                                               monkeypatch):
    """The events before the outage, then the stream's last words, and its
    body ends (no exception for the server to log as a traceback)."""
    from inventory.resources.events import views as events_api
    inventory.org(title="Before")
    response = client.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
    chunks = iter(response.response)
    assert [t for _, t, _ in _sse_events(chunks, 1)] == ["organization.created"]

    def away(*args, **kwargs):
        raise Unavailable()
    monkeypatch.setattr(store.events, "page", away)
    monkeypatch.setattr(store.events, "wait", away)
    rest = b"".join(chunks)  # raises, were the outage not caught
    assert rest.endswith(events_api.ENDED_UNAVAILABLE)
    response.close()


# -- the store: what keeps the feed exact -----------------------------------


def test_a_writer_that_dies_before_publishing_loses_no_event(client, store, monkeypatch):
    # the change and its event are written; the process dies before the feed
    def dies(*_args):
        raise SystemExit("killed")
    monkeypatch.setattr(store.events, "publish_pending", dies)
    with pytest.raises(SystemExit):
        client.post("/organizations", json={"title": "Orphaned?"})
    monkeypatch.undo()
    assert feed(client) == []  # not yet: the request died
    assert store.events.sweep(older_than=-1) == 1
    assert types(feed(client)) == ["organization.created"]
    assert store.events.sweep(older_than=-1) == 0  # swept once


def test_a_writer_that_dies_after_publishing_is_not_published_twice(client, store, monkeypatch,
                                                                   feed_steps):
    # the event reached the feed, but the writer died before clearing the outbox
    feed_steps.keep_outboxes()
    client.post("/organizations", json={"title": "Twice?"})
    monkeypatch.undo()
    assert store.events.sweep(older_than=-1) == 1
    assert types(feed(client)) == ["organization.created"]


def test_a_delete_that_dies_before_publishing_loses_no_event(client, store, inventory,
                                                              monkeypatch):
    inventory.platform(name="p1")
    start = feed(client)[-1]["id"]
    original = store.events.publish_pending

    def dies_on_the_delete(collection, key, pending=None):
        if collection.name == "platforms":
            raise SystemExit("killed")
        return original(collection, key, pending)
    monkeypatch.setattr(store.events, "publish_pending", dies_on_the_delete)
    with pytest.raises(SystemExit):
        client.delete("/kubeplatforms/p1")
    monkeypatch.undo()
    assert client.get("/kubeplatforms/p1").status_code == 404  # marked: reads as gone
    store.events.sweep(older_than=-1)
    assert types(feed(client, after=start)) == ["kubeplatform.deleted"]
    assert client.delete("/kubeplatforms/p1").status_code == 204  # finished, once
    assert types(feed(client, after=start)) == ["kubeplatform.deleted"]


def test_a_reader_never_passes_an_empty_slot_until_it_is_closed(client, store, inventory,
                                                                 monkeypatch, feed_steps):
    inventory.org(title="One")
    taken = feed_steps.take_slot()  # a writer took a slot, and stalls
    inventory.org(title="Three")
    assert types(feed(client)) == ["organization.created"]  # stops before the empty slot
    # a late fill still lands in order
    store.events.collection.insert_one({"_id": taken, "key": "late", "type": "organization.x",
                                        "at": feed_module.stored_now()})
    assert [e["id"] for e in feed(client)][1] == f"evt_{taken}"
    # an empty slot is closed once the one after it is GAP_SECONDS old
    stalled = feed_steps.take_slot()
    inventory.org(title="Five")
    assert len(feed(client)) == 3
    monkeypatch.setattr(feed_module, "GAP_SECONDS", 0)
    assert len(feed(client)) == 4  # the gap closed by a tombstone, which no one sees
    assert store.events.collection.find_one({"_id": stalled})["gap"] is True


def test_an_event_whose_slot_was_closed_takes_another(store, inventory, client, feed_steps):
    inventory.org(title="One")
    stale = feed_steps.take_slot()
    feed_steps.tombstone(stale)  # a reader closed it while the writer stalled
    feed_steps.next_slots([stale])
    event = store.events.event("organization", "updated", "k1", "/organizations/x", {}, None)
    slot = store.events.append(event)
    assert slot > stale
    assert feed(client)[-1]["id"] == f"evt_{slot}"


def test_each_records_events_follow_its_changes_whoever_publishes(client, store, monkeypatch):
    # writer A changes the record and stalls before publishing; writer B
    # changes it again and publishes: A's event first, then its own
    org = client.post("/organizations", json={"title": "v1"}).get_json()["id"]
    publish = store.events.publish_pending
    monkeypatch.setattr(store.events, "publish_pending", lambda *a: None)
    client.patch(f"/organizations/{org}", json={"title": "v2"})  # A, stalled
    monkeypatch.setattr(store.events, "publish_pending", publish)
    client.patch(f"/organizations/{org}", json={"title": "v3"})  # B
    store.events.sweep(older_than=-1)  # A, late
    titles = [e["object"]["title"] for e in feed(client)]
    assert titles == ["v1", "v2", "v3"]


def _dies(*args, **kwargs):
    raise SystemExit("killed")


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's sweep; MongoDB's has its index")
def test_the_sweep_costs_what_is_pending_not_what_is_stored(client, store, inventory,
                                                          monkeypatch):
    for index in range(50):
        inventory.org(title=f"o{index}")
    store.events.sweep(older_than=-1)  # this process's first look (a pass, no query)
    queried = []
    real_find = type(store.organizations.collection).find

    def find(collection, filter=None, *args, **kwargs):
        queried.append(filter)
        return real_find(collection, filter, *args, **kwargs)
    monkeypatch.setattr(type(store.organizations.collection), "find", find)
    assert store.events.sweep(older_than=-1) == 0  # nothing pending: nothing read
    assert queried == []
    # a writer that dies before publishing: its record alone is looked at
    monkeypatch.setattr(store.events, "publish_pending", _dies)
    with pytest.raises(SystemExit):
        client.post("/organizations", json={"title": "dies"})
    monkeypatch.undo()
    monkeypatch.setattr(type(store.organizations.collection), "find", find)
    assert store.events.sweep(older_than=-1) == 1
    assert all("_outbox_since" not in (query or {}) for query in queried)
    newest = client.get(f"/events/evt_{store.events.head()}").get_json()
    assert (newest["type"], newest["object"]["title"]) == ("organization.created", "dies")


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's sweep; MongoDB's has its index")
def test_the_first_sweep_finds_what_an_earlier_process_left_pending(client, store, monkeypatch,
                                                                  feed_steps):
    monkeypatch.setattr(store.events, "publish_pending", _dies)
    with pytest.raises(SystemExit):
        client.post("/organizations", json={"title": "left"})  # its writer died
    monkeypatch.undo()
    feed_steps.forget_pending()  # as a new process, after the journal's replay
    assert store.events.sweep(older_than=-1) == 1
    assert client.get(f"/events/evt_{store.events.head()}").get_json()["object"]["title"] == "left"


def _reader_of(app, client, organization=None):
    made = client.post("/tokens", json={"name": "watcher", "role": "reader",
                                        "organization": organization}).get_json()
    return made, client_with(app, made["token"])


def test_a_revoked_tokens_stream_ends_at_once_and_carries_nothing_after(app, client,
                                                                        inventory):
    made, reader = _reader_of(app, client)
    response = reader.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
    received, ended = [], threading.Event()

    def read():
        for chunk in response.response:  # until the stream ends
            received.append(chunk)
        ended.set()
    threading.Thread(target=read, daemon=True).start()
    inventory.org(title="before the revoke")
    deadline = time.monotonic() + 5
    while b"before the revoke" not in b"".join(received) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert b"before the revoke" in b"".join(received)
    revoked_at = time.monotonic()
    assert client.delete(f"/tokens/{made['id']}").status_code == 204
    inventory.org(title="after the revoke")
    assert ended.wait(5), "the stream goes on after its token was revoked"
    assert time.monotonic() - revoked_at < 3
    assert b"after the revoke" not in b"".join(received)
    response.close()


def test_a_revoked_tokens_wait_answers_401(app, client, inventory):
    made, reader = _reader_of(app, client)
    answers = []
    inventory.org(title="first")
    after = client.get("/events?limit=100").get_json()["results"][-1]["id"]
    waiting = threading.Thread(target=lambda: answers.append(
        reader.get("/events", query_string={"after": after, "wait": 30})), daemon=True)
    waiting.start()
    time.sleep(0.3)  # it waits
    started = time.monotonic()
    assert client.delete(f"/tokens/{made['id']}").status_code == 204
    inventory.org(title="after the revoke")
    waiting.join(5)
    assert not waiting.is_alive() and time.monotonic() - started < 3
    (answer,) = answers
    assert_problem(answer, 401)


def _reading(response):
    """Read a stream's body in a thread: (chunks so far, set when it ends)."""
    received, ended = [], threading.Event()

    def read():
        for chunk in response.response:
            received.append(chunk)
        ended.set()
    threading.Thread(target=read, daemon=True).start()
    return received, ended


def test_past_its_share_the_oldest_stream_of_the_token_ends_and_resumes(app, client, inventory,
                                                                        monkeypatch):
    from inventory.resources.events import views as events_api
    monkeypatch.setattr(events_api, "LONG_LIVED_PER_ORGANIZATION", 3)
    org = inventory.org(title="mine")
    mine = _reader_of(app, client, org["id"])[1]
    colleagues_token, colleague = _reader_of(app, client, org["id"])
    stream = {"Accept": "text/event-stream"}
    theirs = colleague.get("/events", headers=stream, buffered=False)  # the tenant's oldest
    first, second = (mine.get("/events", headers=stream, buffered=False) for _ in range(2))
    readings = [_reading(response) for response in (theirs, first, second)]
    client.patch(f"/organizations/{org['id']}", json={"title": "seen by all"})
    deadline = time.monotonic() + 5
    while not all(b"seen by all" in b"".join(received) for received, _ in readings) \
            and time.monotonic() < deadline:
        time.sleep(0.01)
    third = mine.get("/events", headers=stream, buffered=False)  # past the share: served
    assert third.status_code == 200
    assert mine.get("/organizations").status_code == 200  # and nothing else refused
    (_, theirs_ended), (first_seen, first_ended), (_, second_ended) = readings
    assert first_ended.wait(5), "the token's oldest stream goes on past the share"
    assert b": ended:" in b"".join(first_seen)
    assert not theirs_ended.is_set() and not second_ended.is_set()
    # its client resumes from the last id it saw, and misses nothing
    last_seen = [line for line in b"".join(first_seen).split(b"\n")
                 if line.startswith(b"id: ")][-1][4:].decode()
    client.patch(f"/organizations/{org['id']}", json={"title": "while it was away"})
    resumed = mine.get("/events", headers={**stream, "Last-Event-ID": last_seen},
                       buffered=False)
    assert [data["object"]["title"] for _, _, data in _sse_events(resumed.response, 1)] == \
        ["while it was away"]
    assert second_ended.wait(5)  # now the second was the token's oldest
    assert client.delete(f"/tokens/{colleagues_token['id']}").status_code == 204
    assert theirs_ended.wait(5)
    for response in (theirs, first, second, third, resumed):
        response.close()
    assert events_api.streams.held(Principal("any", "any", "reader", org["id"])) == 0


def test_past_its_share_a_tokens_wait_ends_the_tenants_oldest_rather_than_a_429(
        app, client, inventory, monkeypatch):
    from inventory.resources.events import views as events_api
    monkeypatch.setattr(events_api, "LONG_LIVED_PER_ORGANIZATION", 2)
    mine, theirs = inventory.org(title="mine"), inventory.org(title="theirs")
    readers = [_reader_of(app, client, mine["id"])[1] for _ in range(3)]  # three tokens
    other = _reader_of(app, client, theirs["id"])[1]
    after = client.get("/events?limit=100").get_json()["results"][-1]["id"]
    answers, threads = {}, []
    for index, reader in enumerate(readers[:2]):
        threads.append(threading.Thread(target=lambda i=index, r=reader: answers.__setitem__(
            i, (r.get("/events", query_string={"after": after, "wait": 20}),
                time.monotonic())), daemon=True))
        threads[-1].start()
        time.sleep(0.3)  # it waits; the first is the older
    began = time.monotonic()
    third = readers[2].get("/events", query_string={"after": after, "wait": 1})
    assert third.status_code == 200 and third.get_json()["results"] == []
    assert other.get("/events", query_string={"after": after, "wait": 1}).status_code == 200
    threads[0].join(5)
    assert not threads[0].is_alive(), "the tenant's oldest wait goes on past the share"
    answer, answered_at = answers[0]
    assert answer.status_code == 200 and answer.get_json()["results"] == []
    assert answered_at - began < 3
    assert threads[1].is_alive()  # the younger one still waits
    inventory.org(title="mine, later")  # an event of another organization's: not theirs
    client.post("/kubeplatforms", json={"name": "mine-1", "organization": mine["id"], **PLATFORM})
    threads[1].join(5)
    assert [e["subject"] for e in answers[1][0].get_json()["results"]] == \
        ["/kubeplatforms/mine-1"]


def test_a_commit_wakes_only_the_waiters_that_may_see_its_event(app, client, inventory, store):
    mine, theirs = inventory.org(title="mine"), inventory.org(title="theirs")
    reader = _reader_of(app, client, mine["id"])[1]
    after = client.get("/events?limit=100").get_json()["results"][-1]["id"]
    answers = []
    waiting = threading.Thread(target=lambda: answers.append(
        reader.get("/events", query_string={"after": after, "wait": 10})), daemon=True)
    waiting.start()
    time.sleep(0.3)  # it waits
    woken = store.events.wakeups
    for index in range(20):  # another tenant's writes
        client.post("/kubeplatforms", json={
            "name": f"theirs-{index}", "organization": theirs["id"],
            "control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}})
    assert store.events.wakeups == woken and waiting.is_alive()  # not one wake-up
    client.post("/kubeplatforms", json={
        "name": "mine-1", "organization": mine["id"],
        "control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}})
    waiting.join(5)
    assert not waiting.is_alive()
    (answer,) = answers
    assert [e["subject"] for e in answer.get_json()["results"]] == ["/kubeplatforms/mine-1"]
    assert store.events.wakeups == woken + 1


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's sweep; MongoDB's has its index")
def test_a_writer_noted_while_the_first_look_walks_is_kept(client, store, monkeypatch):
    """The first look walks every record in slices while requests are
    served: a writer that dies during the walk, after the walk passed its
    record, is still swept."""
    real_keys_having = type(store.organizations.collection).keys_having
    publish = store.events.publish_pending

    def walking(collection, field):
        keys = real_keys_having(collection, field)
        if collection.name == "organizations" and field == OUTBOX_SINCE:
            store.events.publish_pending = _dies  # a writer, between two slices, dies
            try:
                with pytest.raises(SystemExit):
                    client.post("/organizations", json={"title": "during the walk"})
            finally:
                store.events.publish_pending = publish
        return keys
    monkeypatch.setattr(type(store.organizations.collection), "keys_having", walking)
    assert store.events.sweep(older_than=-1) == 1
    newest = client.get(f"/events/evt_{store.events.head()}").get_json()
    assert newest["object"]["title"] == "during the walk"


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's start")
def test_the_start_leaves_the_first_look_to_the_first_sweep(tmp_path, monkeypatch):
    """A start makes no pass over the records for what an earlier process
    left pending (about a second at the envelope, before the first answer):
    the first sweep does, and finds it."""
    config = make_config(INVENTORY_DATA_DIR=str(tmp_path))
    earlier = create_app(config)
    store = earlier.extensions["inventory.store"]
    monkeypatch.setattr(store.events, "publish_pending", _dies)
    with pytest.raises(SystemExit):
        client_with(earlier, ADMIN_TOKEN).post("/organizations", json={"title": "left"})
    monkeypatch.undo()
    store.db.journal.close()
    walked = []
    real_keys_having = type(store.organizations.collection).keys_having
    monkeypatch.setattr(type(store.organizations.collection), "keys_having",
                        lambda collection, field: walked.append(field)
                        or real_keys_having(collection, field))
    later = create_app(config)
    assert OUTBOX_SINCE not in walked  # the start walked no outboxes
    store = later.extensions["inventory.store"]
    assert store.events.sweep(older_than=-1) == 1
    assert OUTBOX_SINCE in walked
    newest = client_with(later, ADMIN_TOKEN).get(f"/events/evt_{store.events.head()}")
    assert newest.get_json()["object"]["title"] == "left"
    store.db.journal.close()
