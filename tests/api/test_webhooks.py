"""Webhooks: the resource through HTTP, and deliveries to a real receiver on
loopback (WEBHOOK_ALLOWED_HOSTS lets the tests use http://127.0.0.1)."""
import socket
import threading
import time
from datetime import datetime, timedelta

import orjson
import pytest
from standardwebhooks import Webhook

from app import create_app
from inventory.core import outbound
from inventory.core.caps import WEBHOOK_BACKOFF, WEBHOOK_GIVE_UP
from tests.conftest import ADMIN_TOKEN, REAL_MONGO, assert_problem, client_with, make_config
from tests.support.receiver import Receiver


@pytest.fixture
def config():
    return make_config(WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"])


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.close()


@pytest.fixture
def deliverer(app):
    deliverer = app.extensions["inventory.webhooks"]
    deliverer.timeout = 1.0
    return deliverer


def deliver(deliverer):
    for thread in deliverer.run_once():
        thread.join(10)


def make(client, **body):
    response = client.post("/webhooks", json=body)
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def test_a_webhook_is_made_with_its_secret_shown_once(client, receiver):
    made = make(client, url=receiver.url, filter='type="kubecluster.*"', description="ops")
    assert made["id"].startswith("whk_") and made["secret"].startswith("whsec_")
    assert made["active"] is True and made["filter"] == 'type="kubecluster.*"'
    read = client.get(f"/webhooks/{made['id']}").get_json()
    assert "secret" not in read and "_secret" not in read
    listed = client.get("/webhooks").get_json()["results"]
    assert [w["id"] for w in listed] == [made["id"]] and "secret" not in listed[0]
    assert made["secret"] not in client.get("/events").get_data(as_text=True)


@pytest.mark.parametrize("url", [
    "https://169.254.169.254/latest/meta-data", "https://[::1]/x", "https://0.0.0.0/x",
    "https://10.1.2.3/x", "https://192.168.0.1/x", "https://[::ffff:127.0.0.1]/x",
    "http://hooks.example.com/x", "ftp://hooks.example.com/x", "https://user:pw@example.com/x",
    "https://localhost/x", "not a url",
    # not globally routable, or wrapping an IPv4 address that is not
    "https://100.64.0.1/x", "https://100.100.100.200/latest/meta-data",
    "https://[2002:7f00:1::]/x", "https://[64:ff9b::7f00:1]/x", "https://[fec0::1]/x",
    "https://[2001:0:4136:e378:8000:63bf:f5ff:fffe]/x", "https://224.0.0.1/x"])
def test_ssrf_targets_are_refused_at_create(client, url):
    assert_problem(client.post("/webhooks", json={"url": url}), 422, "body.url")
    assert client.get("/webhooks").get_json()["results"] == []


def test_plain_http_is_refused_with_a_word_on_webhook_allowed_hosts(client):
    detail = assert_problem(client.post("/webhooks", json={"url": "http://localhost/x"}), 422,
                            "body.url")["errors"][0]["message"]
    assert "https://" in detail and "WEBHOOK_ALLOWED_HOSTS" in detail


def test_an_allowed_host_with_a_port_allows_that_port_only():
    app = create_app(make_config(WEBHOOK_ALLOWED_HOSTS=["127.0.0.1:8443", "[::1]:9000"]))
    client = client_with(app, ADMIN_TOKEN)
    for url in ("http://127.0.0.1:8443/x", "https://127.0.0.1:8443/x", "http://[::1]:9000/x"):
        assert client.post("/webhooks", json={"url": url}).status_code == 201, url
    for url in ("http://127.0.0.1:8444/x", "https://127.0.0.1/x", "https://127.0.0.1:22/x",
                "http://[::1]:9001/x"):
        assert_problem(client.post("/webhooks", json={"url": url}), 422, "body.url")


def test_a_name_that_resolves_to_loopback_is_refused():
    def resolves_to_loopback(host, port, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
    with pytest.raises(outbound.TargetRefused, match="loopback"):
        outbound.check("https://evil.example.com/x", resolve=resolves_to_loopback)

    def one_private_among_public(host, port, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
                for a in ("93.184.216.34", "10.0.0.5")]
    with pytest.raises(outbound.TargetRefused, match="private"):
        outbound.check("https://mixed.example.com/x", resolve=one_private_among_public)


def test_a_name_that_does_not_resolve_is_accepted_at_create(client):
    made = make(client, url="https://does-not-exist.invalid/hook")
    assert made["active"] is True


def test_a_bad_filter_is_422(client, receiver):
    assert_problem(client.post("/webhooks", json={"url": receiver.url, "filter": "nope="}), 422,
                   "body.filter")


def test_events_are_delivered_signed_in_feed_order(client, inventory, receiver, deliverer):
    made = make(client, url=receiver.url)
    inventory.org(title="one")
    inventory.org(title="two")
    deliver(deliverer)
    assert len(receiver.received) == 2
    verifier = Webhook(made["secret"])
    events = [verifier.verify(body, headers) for headers, body in receiver.received]
    assert [e["object"]["title"] for e in events] == ["one", "two"]
    for (headers, _), event in zip(receiver.received, events):
        assert headers["webhook-id"] == event["id"]
        assert client.get(f"/events/{event['id']}").get_json()["object"] == event["object"]
    assert client.get(f"/webhooks/{made['id']}").get_json()["last_delivered_event"] == \
        events[-1]["id"]
    deliver(deliverer)  # nothing new: nothing sent again
    assert len(receiver.received) == 2


@pytest.mark.parametrize(("allowed", "port", "expected"), [
    ([], 8123, "http://localhost:8123/"),  # loopback: served directly, on PORT
    (["127.0.0.1", "localhost"], 80, "http://127.0.0.1/"),
    (["inventory.example.com", "localhost"], 8123, "https://inventory.example.com/"),
])
def test_a_delivered_events_schema_is_the_url_the_service_shows_it_at(receiver, allowed, port,
                                                                       expected):
    app = create_app(make_config(WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"], ALLOWED_HOSTS=allowed,
                                 PORT=port))
    client = client_with(app, ADMIN_TOKEN)
    make(client, url=receiver.url)
    client.post("/organizations", json={"title": "one"})
    deliverer = app.extensions["inventory.webhooks"]
    deliverer.timeout = 1.0
    deliver(deliverer)
    ((_, body),) = receiver.received
    event = orjson.loads(body)
    assert event["$schema"] == f"{expected}schemas/Event.json"
    served = client.get(f"/events/{event['id']}", base_url=expected)
    assert served.get_json()["$schema"] == event["$schema"]


def test_only_events_after_its_making_matching_its_filter(client, inventory, receiver,
                                                        deliverer):
    inventory.org(title="before")
    make(client, url=receiver.url, filter='type="kubeplatform.*"')
    inventory.platform()
    deliver(deliverer)
    types = [orjson.loads(body)["type"] for _, body in receiver.received]
    assert types == ["kubeplatform.created"]


def test_a_scoped_admins_webhook_sees_its_organization_only(app, client, inventory, receiver,
                                                           deliverer):
    mine, theirs = inventory.org(title="mine"), inventory.org(title="theirs")
    admin = client.post("/tokens", json={"name": "a", "role": "admin",
                                         "organization": mine["id"]}).get_json()["token"]
    made = make(client_with(app, admin), url=receiver.url)
    assert made["organization"] == mine["id"]
    inventory.platform(org=theirs["id"])
    inventory.platform(org=mine["id"], name="mine-p")
    deliver(deliverer)
    assert [orjson.loads(body)["object"]["name"] for _, body in receiver.received] == ["mine-p"]
    assert client_with(app, admin).get("/webhooks").get_json()["results"][0]["id"] == made["id"]


def test_a_failed_delivery_is_retried_after_the_backoff_in_order(client, inventory, store,
                                                                receiver, deliverer):
    made = make(client, url=receiver.url)
    receiver.answers = [500]
    inventory.org(title="first")
    inventory.org(title="second")
    deliver(deliverer)
    assert len(receiver.received) == 1  # the first failed: the second waits behind it
    doc = store.webhooks.collection.find_one({"_id": made["id"]})
    assert doc["_attempt"] == 1
    wait = (doc["_next_attempt_at"] - doc["_failing_since"]).total_seconds()
    assert wait == pytest.approx(WEBHOOK_BACKOFF[0], abs=1) and WEBHOOK_BACKOFF[0] <= 10
    deliver(deliverer)  # not due yet
    assert len(receiver.received) == 1
    store.webhooks.collection.update_one({"_id": made["id"]},
                                         {"$set": {"_next_attempt_at": datetime(2000, 1, 1)}})
    deliver(deliverer)
    titles = [orjson.loads(body)["object"]["title"] for _, body in receiver.received]
    assert titles == ["first", "first", "second"]
    log = client.get(f"/webhooks/{made['id']}/deliveries").get_json()["results"]
    assert [(d["attempt"], d["status_code"]) for d in log] == [(1, 204), (2, 204), (1, 500)]


@pytest.mark.parametrize("behaviour", ["slow", "black_hole", "redirect", "refused"])
def test_a_receiver_that_does_not_acknowledge_is_retried(client, inventory, store, receiver,
                                                         deliverer, behaviour):
    if behaviour == "slow":
        receiver.delay = 2.0  # past the deliverer's 1 s timeout
    elif behaviour == "black_hole":
        receiver.black_hole = True
    elif behaviour == "redirect":
        receiver.redirect_to = "http://10.0.0.1/internal"  # never followed
    made = make(client, url=receiver.url)
    if behaviour == "refused":  # no longer allowed at delivery: checked again
        store.webhooks.collection.update_one({"_id": made["id"]},
                                             {"$set": {"url": "https://127.0.0.2/x"}})
    inventory.org()
    deliver(deliverer)
    log = client.get(f"/webhooks/{made['id']}/deliveries").get_json()["results"]
    assert len(log) == 1 and log[0]["attempt"] == 1
    if behaviour == "redirect":
        assert log[0]["status_code"] == 302
        assert len(receiver.received) == 1  # the redirect's target was never asked
    else:
        assert log[0]["status_code"] is None and log[0]["error"]
    if behaviour == "refused":
        assert "loopback" in log[0]["error"] and receiver.received == []
    assert store.webhooks.collection.find_one({"_id": made["id"]})["_attempt"] == 1


@pytest.mark.parametrize("stored, refused", [
    ("https://[64:ff9b::7f00:1]/x", "loopback address (127.0.0.1, in the NAT64"),
    ("https://[2002:7f00:1::]/x", "loopback address (127.0.0.1, in the 6to4"),
    ("https://100.64.0.1/x", "carrier-grade NAT"),
    ("http://127.0.0.1:{other}/hook", "https://"),  # the allowed host, another port
    ("https://127.0.0.1:{other}/hook", "loopback")])
def test_every_delivery_checks_the_address_and_the_allowed_port_again(receiver, stored, refused):
    port = receiver.server.server_port
    app = create_app(make_config(WEBHOOK_ALLOWED_HOSTS=[f"127.0.0.1:{port}"]))
    client, deliverer = client_with(app, ADMIN_TOKEN), app.extensions["inventory.webhooks"]
    deliverer.timeout = 1.0
    made = make(client, url=receiver.url)
    app.extensions["inventory.store"].webhooks.collection.update_one(
        {"_id": made["id"]}, {"$set": {"url": stored.format(other=port + 1)}})
    assert client.post("/organizations", json={"title": "Acme"}).status_code == 201
    deliver(deliverer)
    (attempt,) = client.get(f"/webhooks/{made['id']}/deliveries").get_json()["results"]
    assert attempt["status_code"] is None and attempt["error"].startswith("refused: ")
    assert refused in attempt["error"] and receiver.received == []


def test_after_a_day_of_failures_it_is_made_inactive_then_resumes_where_it_stopped(
        client, inventory, store, receiver, deliverer):
    made = make(client, url=receiver.url)
    inventory.org(title="stuck")
    long_ago = datetime.utcnow() - timedelta(seconds=WEBHOOK_GIVE_UP + 60)
    store.webhooks.collection.update_one({"_id": made["id"]}, {"$set": {
        "_failing_since": long_ago, "_attempt": 20}})
    receiver.answers = [503]
    deliver(deliverer)
    read = client.get(f"/webhooks/{made['id']}").get_json()
    assert read["active"] is False and "24 h" in read["inactive_reason"]
    inventory.org(title="later")
    deliver(deliverer)
    assert len(receiver.received) == 1  # inactive: nothing more
    resumed = client.patch(f"/webhooks/{made['id']}", json={"active": True}).get_json()
    assert resumed["active"] is True and resumed["inactive_reason"] is None
    deliver(deliverer)
    titles = [orjson.loads(body)["object"]["title"] for _, body in receiver.received]
    assert titles == ["stuck", "stuck", "later"]


def test_one_deliverer_per_webhook_under_a_lease(app, client, inventory, store, receiver):
    made = make(client, url=receiver.url)
    for index in range(5):
        inventory.org(title=f"o{index}")
    from inventory.integrations.webhooks import Deliverer
    deliverers = [Deliverer(app) for _ in range(4)]  # as four workers would
    barrier = threading.Barrier(4)

    def run(deliverer):
        barrier.wait()
        deliverer.deliver(made["id"])
    threads = [threading.Thread(target=run, args=(d,)) for d in deliverers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    for deliverer in deliverers:  # whoever did not get the lease picks up after
        deliverer.deliver(made["id"])
    titles = [orjson.loads(body)["object"]["title"] for _, body in receiver.received]
    assert titles == [f"o{index}" for index in range(5)]  # each once, in order


def test_webhooks_count_against_the_organizations_quota(client, inventory, receiver):
    org = inventory.org()
    client.patch(f"/organizations/{org['id']}", json={"quotas": {"webhooks": 1}})
    make(client, url=receiver.url, organization=org["id"])
    assert_problem(client.post("/webhooks", json={"url": receiver.url,
                                                  "organization": org["id"]}), 403)


def test_deleting_a_webhook_removes_it_and_its_log(client, inventory, store, receiver,
                                                   deliverer):
    made = make(client, url=receiver.url)
    inventory.org()
    deliver(deliverer)
    assert client.delete(f"/webhooks/{made['id']}").status_code == 204
    assert client.get(f"/webhooks/{made['id']}").status_code == 404
    assert store.webhooks.deliveries.count_documents({}) == 0


def test_readers_and_writers_cannot_touch_webhooks(app, client):
    for role in ("reader", "writer"):
        token = client.post("/tokens", json={"name": role, "role": role}).get_json()["token"]
        assert_problem(client_with(app, token).get("/webhooks"), 403)


def test_resuming_past_the_feeds_retention_is_410(client, inventory, store, receiver):
    inventory.org(title="before")  # the webhook starts after this event
    made = make(client, url=receiver.url)
    inventory.org(title="old")
    assert client.patch(f"/webhooks/{made['id']}", json={"active": False}).get_json()[
        "inactive_reason"] == "Made inactive by an admin."
    # its position ages out of the feed (EVENTS_RETENTION_DAYS): the oldest kept is later
    position = store.webhooks.collection.find_one({"_id": made["id"]})["_position"]
    assert position
    store.events.collection.delete_many({"_id": {"$lte": position}})
    inventory.org(title="kept")
    assert_problem(client.patch(f"/webhooks/{made['id']}", json={"active": True}), 410)
    assert client.get(f"/webhooks/{made['id']}").get_json()["active"] is False


@pytest.mark.parametrize("value", ["yes", "true", 1, 0, None, "false"])
def test_active_is_a_json_boolean_only(client, receiver, value):
    made = make(client, url=receiver.url)
    assert_problem(client.patch(f"/webhooks/{made['id']}", json={"active": value}), 422,
                   "body.active")
    assert client.get(f"/webhooks/{made['id']}").get_json()["active"] is True
    assert client.patch(f"/webhooks/{made['id']}", json={"active": False}).get_json()[
        "active"] is False


@pytest.mark.parametrize("config", [make_config(WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"],
                                                QUOTA_UNSCOPED_WEBHOOKS=2)])
def test_unscoped_admins_webhooks_count_against_the_service_wide_quota(client, inventory,
                                                                       receiver):
    first, _ = make(client, url=receiver.url), make(client, url=receiver.url)
    body = assert_problem(client.post("/webhooks", json={"url": receiver.url}), 403)
    assert "webhooks" in body["detail"]
    org = inventory.org()  # an organization's webhooks count against its own quota
    assert make(client, url=receiver.url, organization=org["id"])["organization"] == org["id"]
    assert client.delete(f"/webhooks/{first['id']}").status_code == 204  # frees its seat
    make(client, url=receiver.url)
    assert_problem(client.post("/webhooks", json={"url": receiver.url}), 403)


def test_unscoped_webhooks_racing_for_the_last_seats_never_pass_the_quota(app, client,
                                                                        receiver):
    app.extensions["inventory.store"].webhooks.unscoped_quota = 3
    statuses, barrier = [], threading.Barrier(8)

    def create():
        barrier.wait()
        statuses.append(client.post("/webhooks", json={"url": receiver.url}).status_code)
    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert sorted(statuses) == [201] * 3 + [403] * 5
    assert len(client.get("/webhooks").get_json()["results"]) == 3


def test_a_webhook_deleted_with_its_organization_receives_none_of_its_events(
        app, client, inventory, store, receiver, deliverer, monkeypatch):
    org = inventory.org(title="leaving")
    admin = client.post("/tokens", json={"name": "a", "role": "admin",
                                         "organization": org["id"]}).get_json()["token"]
    make(client_with(app, admin), url=receiver.url)
    deliver(deliverer)
    delete_tokens = store.tokens.delete_where

    def then_deliver(query):  # the deliverer runs midway through the cascade
        delete_tokens(query)
        deliver(deliverer)
    monkeypatch.setattr(store.tokens, "delete_where", then_deliver)
    assert client.delete(f"/organizations/{org['id']}?force=true").status_code == 204
    deliver(deliverer)
    assert [orjson.loads(body)["type"] for _, body in receiver.received] == []


def test_a_webhook_being_deleted_while_it_delivers_is_sent_nothing_more(
        client, inventory, store, receiver, deliverer):
    made = make(client, url=receiver.url)
    for index in range(5):
        inventory.org(title=f"o{index}")

    def deleting(_headers, _body):  # its delete begins while the first event is in flight
        store.webhooks.mark_deleting({"_id": made["id"]})
    receiver.on_receive = deleting
    deliver(deliverer)
    assert len(receiver.received) == 1
    receiver.on_receive = None
    assert client.delete(f"/webhooks/{made['id']}").status_code == 204
    inventory.org(title="later")
    deliver(deliverer)
    assert len(receiver.received) == 1


# These count the embedded store's writes (LockedCollection.writes) and this
# process's wakes of its deliverer; on a shared database the deliverer
# follows the feed by reading it (other processes commit too), and pymongo
# keeps no count of writes: there they would measure nothing.
_COUNTS_EMBEDDED_WORK = pytest.mark.skipif(
    REAL_MONGO, reason="counts the embedded store's writes and in-process wakes")


@_COUNTS_EMBEDDED_WORK
def test_other_tenants_writes_cost_a_webhook_no_write(app, client, inventory, store,
                                                      receiver, deliverer):
    theirs = [inventory.org(title=f"t{index}") for index in range(3)]
    for org in theirs:
        for _ in range(20):
            make(client, url=receiver.url, organization=org["id"])
    mine = inventory.org(title="writer")
    make(client, url=receiver.url, organization=mine["id"], filter='type="nothing.matches"')
    make(client, url=receiver.url, filter='type="nothing.matches"')  # an unscoped admin's
    deliver(deliverer)
    webhooks = store.webhooks.collection
    before = webhooks.writes
    deliverer.started.clear()
    deliverer.start()  # the loop, as when serving: it follows the feed
    try:
        for index in range(20):
            assert client.patch(f"/organizations/{mine['id']}",
                                json={"title": f"w{index}"}).status_code == 200
        head = store.events.head()
        deadline = time.monotonic() + 10
        while (deliverer.followed < head or deliverer.delivering) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        deliverer.stop()
    assert deliverer.followed == head
    assert webhooks.writes == before  # no claim, advance or release: nothing to deliver
    assert set(deliverer.started) == {None, mine["id"]}  # only those that may see were woken
    assert receiver.received == []


@_COUNTS_EMBEDDED_WORK
def test_commits_of_organizations_without_webhooks_do_not_wake_the_deliverer(
        client, inventory, receiver, deliverer):
    theirs = inventory.org(title="has webhooks")
    make(client, url=receiver.url, organization=theirs["id"])
    quiet = inventory.org(title="has none")
    deliver(deliverer)
    deliverer.start()
    try:
        time.sleep(0.2)
        passes = deliverer.passes
        for index in range(50):
            client.patch(f"/organizations/{quiet['id']}", json={"title": f"w{index}"})
        woken = deliverer.passes - passes
    finally:
        deliverer.stop()
    assert woken <= 3  # its own look, once a second, at most; not once a write


@_COUNTS_EMBEDDED_WORK
def test_a_position_far_behind_is_written_once_in_a_batch(client, inventory, store, receiver,
                                                          deliverer, monkeypatch):
    from inventory.integrations import webhooks as deliveries
    monkeypatch.setattr(deliveries, "ADVANCE_BATCH", 5)
    org = inventory.org(title="quiet")
    made = make(client, url=receiver.url, organization=org["id"])
    stored = store.webhooks.collection.find_one({"_id": made["id"]})["_position"]
    deliver(deliverer)
    before = store.webhooks.collection.writes
    for index in range(10):
        inventory.org(title=f"other-{index}")
    deliver(deliverer)  # the sweep: nothing of its organization since its position
    doc = store.webhooks.collection.find_one({"_id": made["id"]})
    assert doc["_position"] == store.events.head() > stored
    assert store.webhooks.collection.writes == before + 1
    inventory.platform(org=org["id"], name="its-own")
    deliver(deliverer)
    assert [orjson.loads(body)["object"]["name"] for _, body in receiver.received] == ["its-own"]


@pytest.mark.parametrize("config", [make_config(WEBHOOK_ALLOWED_HOSTS=["127.0.0.1"],
                                                QUOTA_UNSCOPED_WEBHOOKS=2)])
def test_unscoped_webhooks_made_before_the_quota_count_against_it(client, inventory, store,
                                                                  receiver, deliverer):
    older = make(client, url=receiver.url)
    store.webhooks.collection.update_one({"_id": older["id"]},
                                         {"$unset": {"_seat": "", "_scope": ""}})
    make(client, url=receiver.url)  # the seat the older one held looks free
    deliver(deliverer)  # at start, the deliverer gives it a seat and its scope
    assert_problem(client.post("/webhooks", json={"url": receiver.url}), 403)
    inventory.org(title="seen")
    deliver(deliverer)
    assert len(receiver.received) == 2  # both see it: the older one was given its scope
