"""The webhooks' store (inventory/resources/webhooks/store.py): a webhook
made with its secret (shown once) delivers from the feed's head; an
unscoped admin's webhooks take one of a bounded number of seats; a scoped
caller's are its organization's; one deliverer at a time holds a webhook's
lease (claim, advance, release); a failed attempt backs off, and a
webhook failing for WEBHOOK_GIVE_UP is made inactive, then resumed by a
change; who sees which organizations' events; the delivery log, trimmed
to its newest, goes with its webhook."""
import re
from datetime import datetime, timedelta, timezone

import pytest

from inventory.core.caps import WEBHOOK_BACKOFF, WEBHOOK_DELIVERY_LOG, WEBHOOK_GIVE_UP
from inventory.core.errors import NotAllowed, QuotaExceeded
from inventory.resources.webhooks import store as webhooks_store
from inventory.store.pages import PageRequest

URL = "https://hooks.example.com/inventory"


@pytest.fixture
def org(store):
    return store.organizations.create({"title": "Acme", "description": ""}, "tester")


def _webhook(store, organization=None, scope=None, filter=None):
    return store.webhooks.create({"url": URL, "organization": organization, "filter": filter},
                                 "admin", scope=scope)


def _utc_now():
    return datetime.now(timezone.utc).replace(tzinfo=None)


def test_a_webhook_is_made_with_its_secret_shown_once_delivering_from_the_feeds_head(
        store, org):
    heard = []
    store.webhooks.listeners.append(lambda record, resumed: heard.append((record["id"],
                                                                          resumed)))
    record, secret = _webhook(store, org["id"])
    assert re.fullmatch(r"whsec_[A-Za-z0-9+/]{32}", secret)
    assert secret not in str(record) and record["active"] is True
    assert store.webhooks.find_doc(record["id"])["_position"] == store.events.head()
    assert heard == [(record["id"], False)]
    _, another = _webhook(store, org["id"])
    assert another != secret


def test_a_scoped_callers_webhook_is_its_organizations(store, org):
    record, _ = _webhook(store, scope=org["id"])
    assert record["organization"] == org["id"]
    other = store.organizations.create({"title": "Other", "description": ""}, "tester")
    with pytest.raises(NotAllowed):
        _webhook(store, other["id"], scope=org["id"])


def test_unscoped_webhooks_take_seats_a_delete_frees(store, org):
    store.webhooks.unscoped_quota = 2
    first, _ = _webhook(store)
    _webhook(store)
    with pytest.raises(QuotaExceeded):
        _webhook(store)
    _webhook(store, org["id"])  # an organization's counts against its own quota
    store.webhooks.delete(first["id"])
    again, _ = _webhook(store)  # the seat it freed
    assert again["organization"] is None
    store.webhooks.unscoped_quota = 3
    _webhook(store)
    store.webhooks.delete(again["id"])  # two held, a free seat below them
    store.webhooks.unscoped_quota = 2  # lowered to what is held: none more
    with pytest.raises(QuotaExceeded):
        _webhook(store)


def test_one_deliverer_at_a_time_holds_the_lease(store, org):
    record, _ = _webhook(store, org["id"])
    key = record["id"]
    assert store.webhooks.claim(key, "a")["_lease_owner"] == "a"
    assert store.webhooks.claim(key, "b") is None
    assert store.webhooks.claim(key, "a") is not None  # renewed by its holder
    assert store.webhooks.advance(key, "b", "0000000000000005") is False
    assert store.webhooks.advance(key, "a", "0000000000000005", delivered=True) is True
    assert store.webhooks.get(key)["last_delivered_event"] == "evt_0000000000000005"
    assert store.webhooks.still_delivering(key, "a", org["id"])
    assert not store.webhooks.still_delivering(key, "b", org["id"])
    store.webhooks.release(key, "a")
    assert store.webhooks.claim(key, "b")["_position"] == "0000000000000005"


def test_a_release_passes_what_the_webhook_does_not_see_unless_its_filter_changed(store, org):
    record, _ = _webhook(store, org["id"], filter='type="kubecluster.*"')
    key = record["id"]
    start = store.webhooks.claim(key, "a")["_position"]
    assert start < "0000000000000009"
    store.webhooks.release(key, "a", passed="0000000000000009", filter='type="other"')
    assert store.webhooks.find_doc(key)["_position"] == start  # the filter read was not its own
    assert store.webhooks.claim(key, "b") is not None  # released all the same
    store.webhooks.release(key, "b")
    store.webhooks.claim(key, "a")
    store.webhooks.release(key, "a", passed="0000000000000009", filter='type="kubecluster.*"')
    assert store.webhooks.find_doc(key)["_position"] == "0000000000000009"
    # passed while no deliverer holds it, from the position read
    assert store.webhooks.pass_unseen(key, "0000000000000009", "000000000000000c",
                                      'type="kubecluster.*"')
    assert not store.webhooks.pass_unseen(key, "0000000000000009", "000000000000000f",
                                          'type="kubecluster.*"')  # moved meanwhile
    store.webhooks.claim(key, "a")
    assert not store.webhooks.pass_unseen(key, "000000000000000c", "000000000000000f",
                                          'type="kubecluster.*"')  # leased


def test_a_failed_attempt_backs_off_and_releases_the_lease(store, org):
    record, _ = _webhook(store, org["id"])
    doc = store.webhooks.claim(record["id"], "a")
    before = _utc_now()
    store.webhooks.failed(doc, "a", "HTTP 500")
    after = store.webhooks.find_doc(record["id"])
    assert after["_attempt"] == 1 and after["_lease_owner"] is None and after["active"]
    delay = (after["_next_attempt_at"] - before).total_seconds()
    assert WEBHOOK_BACKOFF[0] - 1 <= delay <= WEBHOOK_BACKOFF[0] + 1
    doc = store.webhooks.claim(record["id"], "a")
    store.webhooks.failed(doc, "a", "HTTP 500")
    delay = (store.webhooks.find_doc(record["id"])["_next_attempt_at"] - before).total_seconds()
    assert WEBHOOK_BACKOFF[1] - 1 <= delay <= WEBHOOK_BACKOFF[1] + 2


def test_a_webhook_failing_for_the_give_up_time_is_made_inactive_then_resumed(store, org):
    heard = []
    store.webhooks.listeners.append(lambda record, resumed: heard.append(resumed))
    record, _ = _webhook(store, org["id"])
    doc = store.webhooks.claim(record["id"], "a")
    since = _utc_now() - timedelta(seconds=WEBHOOK_GIVE_UP + 1)
    store.webhooks.failed({**doc, "_failing_since": since, "_attempt": 40}, "a", "HTTP 503")
    stopped = store.webhooks.get(record["id"])
    assert stopped["active"] is False and "HTTP 503" in stopped["inactive_reason"]
    assert "41 attempts" in stopped["inactive_reason"]
    assert store.webhooks.to_deliver(record["id"]) is None
    assert store.webhooks.claim(record["id"], "a") is None
    resumed = store.webhooks.update(record["id"], {"active": True}, "admin")
    assert resumed["active"] is True and resumed["inactive_reason"] is None
    doc = store.webhooks.to_deliver(record["id"])
    assert doc["_attempt"] == 0 and doc["_failing_since"] is None
    assert heard == [False, True]
    made_inactive = store.webhooks.update(record["id"], {"active": False}, "admin")
    assert made_inactive["inactive_reason"] == "Made inactive by an admin."


def test_each_organizations_events_are_seen_by_its_webhooks_and_the_unscoped(store, org):
    other = store.organizations.create({"title": "Other", "description": ""}, "tester")
    mine, _ = _webhook(store, org["id"])
    theirs, _ = _webhook(store, other["id"])
    everyone, _ = _webhook(store)
    stopped, _ = _webhook(store, org["id"])
    store.webhooks.update(stopped["id"], {"active": False}, "admin")

    def seeing(*organizations):
        return {doc["_id"] for doc in store.webhooks.seeing(organizations)}
    assert seeing(org["id"]) == {mine["id"], everyone["id"]}
    assert seeing(org["id"], other["id"]) == {mine["id"], theirs["id"], everyone["id"]}
    assert seeing(None) == {everyone["id"]}  # events of no organization
    assert {doc["_id"] for doc in store.webhooks.scheduled(lambda: None)} == {
        mine["id"], theirs["id"], everyone["id"]}


def test_scheduled_reads_in_slices_pausing_between_them(store, org, sweep_slice):
    made = {_webhook(store, org["id"])[0]["id"] for _ in range(5)}
    pauses = []
    assert {doc["_id"] for doc in store.webhooks.scheduled(lambda: pauses.append(1))} == made
    assert len(pauses) == 2


def test_the_delivery_log_keeps_the_newest_and_goes_with_its_webhook(store, org, monkeypatch):
    monkeypatch.setattr(webhooks_store.secrets, "randbelow", lambda _n: 0)  # trim every time
    record, _ = _webhook(store, org["id"])
    kept, _ = _webhook(store, org["id"])
    store.webhooks.log(kept["id"], "evt_0000000000000001", 1, 200, None, 12)
    for attempt in range(WEBHOOK_DELIVERY_LOG + 3):
        store.webhooks.log(record["id"], "evt_0000000000000001", attempt + 1, 500, "HTTP 500", 3)
    page = store.webhooks.deliveries_page(record["id"], PageRequest(WEBHOOK_DELIVERY_LOG + 10))
    assert len(page.records) == WEBHOOK_DELIVERY_LOG
    assert set(page.records[0]) == {"event", "attempt", "status_code", "error", "duration_ms",
                                    "at"}
    store.webhooks.delete(record["id"])
    assert store.webhooks.deliveries.count_documents({}) == 1  # the other webhook's
    assert store.webhooks.deliveries_page(kept["id"], PageRequest(10)).records[0][
        "status_code"] == 200
