"""The webhooks' deliverer (inventory/integrations/webhooks.py), called
directly, its POSTs recorded or held rather than sent: the service's URL
in bodies made outside a request; a delivery posts a webhook's events in
feed order (its organization's, matching its filter, made after it), moves
its position, and posts nothing twice; a failure holds back the events
after it until its backoff ends; another process's live lease is left
alone; a target no longer allowed is refused at the POST; an event's body
is made once, as `GET /events/{id}` shows it; the slots' fair shares (the
organizations in turn, each holding at most its share, and one that holds
any leaves a quarter of the slots free). With a real receiver, and through
HTTP: tests/api/test_webhooks.py."""
import threading
from datetime import datetime, timezone

import orjson
import pytest

from inventory.integrations.webhooks import Deliverer, service_url
from inventory.store.pages import PageRequest
from tests.conftest import make_config
from tests.support.stores import PLATFORM


class Recording(Deliverer):
    """Sends nothing: records each event it would POST, answering as told."""

    def __init__(self, app):
        super().__init__(app)
        self.posted, self.answers = [], []

    def post(self, url, secret, event):
        self.posted.append(event)
        return self.answers.pop(0) if self.answers else (204, None)


class Holding(Deliverer):
    """Each delivery holds its slot until `let_go` is set (receivers that
    never answer)."""

    def __init__(self, app):
        super().__init__(app)
        self.let_go = threading.Event()

    def deliver(self, key):
        self.let_go.wait(10)


def _org(store, title="Acme"):
    return store.organizations.create({"title": title, "description": ""}, "t")["id"]


def _platform(store, org, name):
    return store.platforms.create({"name": name, "organization": org, **PLATFORM}, "t")


def _webhook(store, org=None, **body):
    record, _ = store.webhooks.create({"url": "https://hooks.example.com/x",
                                       **({"organization": org} if org else {}), **body}, "t")
    return record["id"]


def _stored(store, key):
    return store.webhooks.collection.find_one({"_id": key})


def _titles(events):
    return [event["object"].get("name") or event["object"].get("title") for event in events]


@pytest.mark.parametrize(("allowed", "port", "expected"), [
    ([], 8000, "http://localhost:8000/"),  # none named: localhost, served directly on PORT
    (["*", ".example.com", "127.0.0.1"], 80, "http://127.0.0.1/"),  # patterns are no host
    (["localhost"], 8123, "http://localhost:8123/"),
    (["inventory.example.com", "localhost"], 8123, "https://inventory.example.com/"),
])
def test_the_service_url_is_its_first_named_host(allowed, port, expected):
    assert service_url(allowed, port) == expected


def test_a_delivery_posts_the_webhooks_events_in_feed_order_once(app, store):
    mine, theirs = _org(store, "mine"), _org(store, "theirs")
    _platform(store, mine, "before")
    key = _webhook(store, mine, filter='type="kubeplatform.*"')
    _platform(store, mine, "one")
    _platform(store, theirs, "elsewhere")
    store.organizations.update(mine, {"title": "renamed"}, "t")  # not its filter's
    _platform(store, mine, "two")
    deliverer = Recording(app)
    deliverer.deliver(key)
    assert _titles(deliverer.posted) == ["one", "two"]
    stored = _stored(store, key)
    assert stored["last_delivered_event"] == deliverer.posted[-1]["id"]
    assert stored["_lease_owner"] is None  # given back
    deliverer.deliver(key)
    assert len(deliverer.posted) == 2  # nothing again


def test_a_webhook_with_nothing_to_deliver_writes_nothing(app, store):
    org = _org(store)
    key = _webhook(store, org)
    _platform(store, _org(store, "other"), "theirs")
    before = _stored(store, key)
    deliverer = Recording(app)
    deliverer.deliver(key)
    assert deliverer.posted == [] and _stored(store, key) == before  # not even a lease


def test_a_failure_holds_back_the_events_after_it_until_its_backoff_ends(app, store):
    org = _org(store)
    key = _webhook(store, org)
    _platform(store, org, "first")
    _platform(store, org, "second")
    deliverer = Recording(app)
    deliverer.answers = [(500, None)]
    deliverer.deliver(key)
    assert _titles(deliverer.posted) == ["first"]
    stored = _stored(store, key)
    now = datetime.now(timezone.utc).replace(tzinfo=None)  # naive UTC, as stored
    assert stored["_attempt"] == 1 and stored["_next_attempt_at"] > now
    deliverer.deliver(key)  # waiting out its backoff
    assert len(deliverer.posted) == 1
    store.webhooks.collection.update_one({"_id": key},
                                         {"$set": {"_next_attempt_at": datetime(2000, 1, 1)}})
    deliverer.deliver(key)
    assert _titles(deliverer.posted) == ["first", "first", "second"]
    assert _stored(store, key)["_attempt"] == 0


def test_another_processs_live_lease_is_left_alone(app, store):
    org = _org(store)
    key = _webhook(store, org)
    _platform(store, org, "one")
    store.webhooks.collection.update_one({"_id": key}, {"$set": {
        "_lease_owner": "another:1:ab", "_lease_until": datetime(2999, 1, 1)}})
    deliverer = Recording(app)
    deliverer.deliver(key)
    assert deliverer.posted == []
    assert _stored(store, key)["_lease_owner"] == "another:1:ab"


def test_a_target_no_longer_allowed_is_refused_at_the_post_unsent(app, store):
    _org(store)
    (event,) = store.events.page(PageRequest(10)).records
    status, error = Deliverer(app).post("https://127.0.0.2/x", "whsec_" + "A" * 32, event)
    assert status is None and error.startswith("refused: ") and "loopback" in error


def test_an_events_body_is_made_once_as_the_service_shows_it(app, store):
    _org(store)
    (event,) = store.events.page(PageRequest(10)).records
    deliverer = Deliverer(app)
    body = deliverer.body(event)
    shown = orjson.loads(body)
    assert shown["id"] == event["id"] and shown["object"]["title"] == "Acme"
    assert shown["$schema"] == service_url(app.config["ALLOWED_HOSTS"], app.config["PORT"]) + \
        "schemas/Event.json"
    assert deliverer.body(event) is body  # one body for every webhook


def _held(store, deliverer, org, webhooks, event_name):
    """`webhooks` webhooks of `org` woken by one event; the slots' threads."""
    keys = [_webhook(store, org) for _ in range(webhooks)]
    _platform(store, org, event_name)
    return keys, deliverer.run_once()


@pytest.mark.parametrize("config", [make_config(WEBHOOK_DELIVERIES_PER_WORKER=8,
                                                WEBHOOK_DELIVERIES_PER_ORGANIZATION=3)])
def test_an_organization_holds_at_most_its_share_of_the_slots(app, store):
    deliverer = Holding(app)
    a, b = _org(store, "a"), _org(store, "b")
    keys_b = [_webhook(store, b) for _ in range(2)]
    _, threads = _held(store, deliverer, a, 5, "pa")
    assert deliverer.started == {a: 3}  # five slots free, but its share is three
    _platform(store, b, "pb")
    threads += deliverer.step()
    assert deliverer.started == {a: 3, b: len(keys_b)}
    deliverer.let_go.set()
    for thread in threads:
        thread.join(10)


@pytest.mark.parametrize("config", [make_config(WEBHOOK_DELIVERIES_PER_WORKER=4,
                                                WEBHOOK_DELIVERIES_PER_ORGANIZATION=4)])
def test_a_quarter_of_the_slots_is_kept_for_organizations_that_hold_none(app, store):
    deliverer = Holding(app)
    a, b = _org(store, "a"), _org(store, "b")
    key_b = _webhook(store, b)
    _, threads = _held(store, deliverer, a, 5, "pa")
    assert deliverer.started == {a: 3}  # the last slot is kept
    assert deliverer.delivering
    _platform(store, b, "pb")
    threads += deliverer.step()
    assert deliverer.started == {a: 3, b: 1} and key_b
    deliverer.let_go.set()
    for thread in threads:
        thread.join(10)


@pytest.mark.parametrize("config", [make_config(WEBHOOK_DELIVERIES_PER_WORKER=2,
                                                WEBHOOK_DELIVERIES_PER_ORGANIZATION=2)])
def test_the_slots_go_to_the_organizations_in_turn(app, store):
    deliverer = Holding(app)
    a, b = _org(store, "a"), _org(store, "b")
    for org in (a, b):
        for _ in range(3):
            _webhook(store, org)
    _platform(store, a, "pa")
    _platform(store, b, "pb")
    threads = deliverer.run_once()
    assert deliverer.started == {a: 1, b: 1}  # not both slots to whichever woke first
    deliverer.let_go.set()
    for thread in threads:
        thread.join(10)
