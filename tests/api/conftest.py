"""Fixtures of the HTTP tests that reach the stores' private parts, each
saying why (tests/unit/test_private_reach.py holds them to it)."""
import pytest


@pytest.fixture
def session_clock(monkeypatch):
    """Sets the console sessions' clock: `set(moment)` (naive UTC, as
    stored). Private: the sessions read `inventory.store.sessions._now`, which
    no setting moves, and time_machine would move every thread's clock."""
    from inventory.store import sessions

    def set_to(moment):
        monkeypatch.setattr(sessions, "_now", lambda: moment)
    return set_to


@pytest.fixture
def feed_steps(store, monkeypatch):
    """The feed's steps (inventory.store.events), to run one at a time.
    Private: a slot taken and left empty, closed by a reader, or an outbox
    left uncleared happen inside one request, between two of its writes;
    the tests put them between requests by calling those writes alone."""
    class FeedSteps:
        """The feed's own steps, one at a time, on the store's `events`."""

        def __init__(self, events, monkeypatch):
            self.events, self.monkeypatch = events, monkeypatch

        def take_slot(self):
            """A writer takes a slot (and stalls before filling it)."""
            return self.events._take_slot()

        def tombstone(self, slot):
            """A reader closes the slot meanwhile."""
            self.events._tombstone(slot)

        def next_slots(self, slots):
            """The writer's next slots are `slots`, then new ones."""
            take, given = self.events._take_slot, iter(slots)
            self.monkeypatch.setattr(self.events, "_take_slot", lambda: next(given, None) or take())

        def forget_pending(self):
            """As a new process, after the journal's replay: nothing known pending."""
            self.events._pending = {}

        def keep_outboxes(self):
            """Writers die after publishing, before clearing their outbox."""
            self.monkeypatch.setattr(type(self.events), "_clear_outbox",
                                     staticmethod(lambda *a: None))

    return FeedSteps(store.events, monkeypatch)


@pytest.fixture
def in_flight_counts():
    """`counts(app)`: every caller's requests in flight, {key: count}.
    Private: the limit's table (inventory.http.rate_limits.InFlight) answers
    one key's count only; a slot never given back shows as a key left over."""
    from inventory.http.rate_limits import get_limits

    return lambda app: dict(get_limits(app).in_flight._counts)


@pytest.fixture
def mongomock_ttl_indexes():
    """`indexes(collection)`: the TTL indexes mongomock itself keeps for a
    collection of the embedded store. Private: mongomock's own expiry, which
    the embedded store's replaces, is only seen in its store's state."""
    return lambda collection: collection._collection._store._ttl_indexes


@pytest.fixture
def forget_support_dates(store):
    """`forget()`: the clusters' store forgets the support dates it has
    checked, as a process started with a new release does. Private: it
    checks them once per process (inventory/resources/clusters/store.py)."""
    def forget():
        store.clusters._support_dates_for = None
    return forget
