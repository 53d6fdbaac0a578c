"""inventory.http.rate_limits, on its own: the configured limits (refused
with a clear message when they do not parse; counted the shortest window
first), who a caller is (its token's id, else its address), who is exempt
(open routes, the bootstrap admin), the 429's message and Retry-After, the
organization's limit over its tokens and the tighter of two shown, the rate
headers, and the requests in flight per caller (a slot given back once,
whichever way the request ends). The counting itself is the store's:
tests/unit/store/test_rate_counters.py; through HTTP: tests/api/test_limits.py."""
import pytest
from flask import Response
from limits import parse

from inventory.core.errors import Throttled
from inventory.http.auth import BOOTSTRAP_ADMIN_KEY, Principal
from inventory.http.gate import Passage
from inventory.http.rate_limits import InFlight, Limits
from inventory.store.rate_counters import LocalRateCounter
from tests.conftest import make_config

READER = Principal("tok_1", "bot", "reader")
MEMBER = Principal("tok_2", "member", "reader", organization="org_1")


class Counter:
    """A rate counter answering as told: `answers[key]`, (allowed, index,
    remaining, reset) per hit (allowed, index 0, 5 left, 9 s by default);
    each hit's (windows, key) kept in `hits`."""

    def __init__(self, **answers):
        self.answers, self.hits = answers, []

    def hit(self, windows, key):
        self.hits.append((windows, key))
        return self.answers.get(key.split(":")[0], (True, 0, 5, 9))


@pytest.fixture
def passage(app):
    """`passage(path, caller=..., method=...)`: the gate's Passage of a
    request, its caller already looked up (the gate's `caller` slot)."""
    contexts = []

    def make(path="/organizations", caller=None, method="GET"):
        context = app.test_request_context(path, method=method,
                                           environ_base={"REMOTE_ADDR": "192.0.2.7"})
        context.push()
        contexts.append(context)
        made = Passage(context.request)
        made.caller = caller
        return made
    yield make
    for context in reversed(contexts):
        context.pop()


def _answer():
    return Response("")


def limits(counter=None, **settings):
    return Limits(make_config(**settings), counter or LocalRateCounter())


def test_a_limit_that_does_not_parse_stops_the_start_naming_the_setting():
    with pytest.raises(ValueError, match="RATE_LIMIT_ANONYMOUS='lots' is not a rate limit"):
        limits(RATE_LIMIT_ANONYMOUS="lots")


def test_a_policys_windows_are_counted_shortest_first():
    made = limits(RATE_LIMIT="1000 per hour; 10 per second; 100 per minute")
    assert made.windows["token"] == ((10, 1), (100, 60), (1000, 3600))


def test_a_caller_is_its_token_else_its_address(passage):
    counter = Counter()
    made = limits(counter)
    made.enter(passage(caller=READER))
    made.enter(passage(caller=None))
    assert [key for _, key in counter.hits] == ["token:tok_1", "address:192.0.2.7"]
    assert [windows for windows, _ in counter.hits] == [made.windows["token"],
                                                        made.windows["address"]]


def test_open_routes_and_the_bootstrap_admin_are_not_counted(passage):
    counter = Counter()
    made = limits(counter, CONCURRENT_REQUESTS=1)
    made.enter(passage("/healthz"))
    made.enter(passage(method="OPTIONS"))
    admin = Principal(BOOTSTRAP_ADMIN_KEY, "admin", "admin")
    for _ in range(3):
        made.enter(passage(caller=admin))
    assert counter.hits == []
    assert made.in_flight.held(f"token:{BOOTSTRAP_ADMIN_KEY}") == 0


def test_past_its_rate_a_token_is_throttled_with_the_seconds_to_wait(passage):
    made = limits(RATE_LIMIT="2 per day", CONCURRENT_REQUESTS=0)
    made.enter(passage(caller=READER))
    made.enter(passage(caller=READER))
    made.enter(passage(caller=Principal("tok_other", "other", "reader")))  # its own count
    with pytest.raises(Throttled) as refused:
        made.enter(passage(caller=READER))
    assert "this token reached its rate limit (2 per 86400 seconds)" in refused.value.detail
    assert 1 <= refused.value.retry_after <= 86400


def test_the_refusal_names_the_limit_that_refused(passage):
    counter = Counter(token=(False, 1, 0, 0))
    made = limits(counter, RATE_LIMIT="10 per second; 100 per minute")
    with pytest.raises(Throttled) as refused:
        made.enter(passage(caller=READER))
    assert "(100 per 60 seconds)" in refused.value.detail
    assert refused.value.retry_after == 1  # at least a second, whatever the counter says


def test_requests_without_a_valid_token_are_refused_as_such(passage):
    made = limits(Counter(address=(False, 0, 0, 30)))
    with pytest.raises(Throttled, match="requests without a valid token reached") as refused:
        made.enter(passage())
    assert refused.value.retry_after == 30


def test_a_scoped_token_counts_in_its_organizations_limit_too(passage):
    counter = Counter(organization=(False, 0, 0, 12))
    made = limits(counter)
    with pytest.raises(Throttled, match="this token's organization reached") as refused:
        made.enter(passage(caller=MEMBER))
    assert [key for _, key in counter.hits] == ["token:tok_2", "organization:org_1"]
    assert refused.value.retry_after == 12
    made.enter(passage(caller=READER))  # an unscoped token has no organization's count
    assert counter.hits[-1][1] == "token:tok_1"


@pytest.mark.parametrize("organization_left, shown", [(2, "organization"), (7, "token")])
def test_the_headers_show_the_tighter_of_token_and_organization(passage, organization_left,
                                                               shown):
    counter = Counter(token=(True, 0, 5, 9), organization=(True, 0, organization_left, 3))
    made = limits(counter, RATE_LIMIT="1000 per minute", RATE_LIMIT_ORGANIZATION="3000 per hour")
    entered = passage(caller=MEMBER)
    made.enter(entered)
    answer = made.leave(entered, _answer())
    expected = {"token": ('"token";q=1000;w=60', '"token";r=5;t=9'),
                "organization": ('"organization";q=3000;w=3600',
                                 f'"organization";r={organization_left};t=3')}[shown]
    assert (answer.headers["RateLimit-Policy"], answer.headers["RateLimit"]) == expected


def test_an_uncounted_request_gets_no_rate_headers(passage):
    made = limits(Counter())
    entered = passage("/healthz")
    made.enter(entered)
    answer = made.leave(entered, _answer())
    assert "RateLimit" not in answer.headers and "RateLimit-Policy" not in answer.headers


def test_in_flight_holds_at_most_the_limit_per_key_and_forgets_a_key_at_zero():
    slots = InFlight(2)
    assert slots.acquire("a") and slots.acquire("a") and not slots.acquire("a")
    assert slots.acquire("b")  # each key its own
    slots.release("a")
    assert slots.held("a") == 1 and slots.acquire("a")
    for _ in range(3):
        slots.release("a")  # one too many: never below zero
    assert slots.held("a") == 0 and slots.acquire("a") and slots.acquire("a")


def test_a_caller_past_its_requests_in_flight_is_throttled_and_takes_no_slot(passage):
    made = limits(Counter(), CONCURRENT_REQUESTS=1)
    first = passage(caller=READER)
    made.enter(first)
    assert first.in_flight_key == "token:tok_1" and made.in_flight.held("token:tok_1") == 1
    second = passage(caller=READER)
    with pytest.raises(Throttled, match="at most 1 of one caller's requests") as refused:
        made.enter(second)
    assert refused.value.retry_after == 1 and second.in_flight_key is None
    assert made.in_flight.held("token:tok_1") == 1


def test_the_slot_is_given_back_once_when_the_answer_closes(passage):
    made = limits(Counter(), CONCURRENT_REQUESTS=2)
    other, entered = passage(caller=READER), passage(caller=READER)
    made.enter(other)  # another request of the caller's, still in flight
    made.enter(entered)
    first = made.leave(entered, _answer())
    assert made.in_flight.held("token:tok_1") == 2  # held until the last byte is sent
    replaced = made.leave(entered, _answer())  # a later way out failed: a 500 instead
    first.close()
    replaced.close()
    made.close(entered, None)
    assert made.in_flight.held("token:tok_1") == 1  # given back once, not three times


def test_a_request_no_answer_took_gives_its_slot_back_at_teardown(passage):
    made = limits(Counter(), CONCURRENT_REQUESTS=1)
    entered = passage(caller=READER)
    made.enter(entered)
    made.close(entered, RuntimeError("failed before any answer"))
    assert made.in_flight.held("token:tok_1") == 0


def test_a_long_lived_request_gives_its_slot_back_at_once(passage):
    made = limits(Counter(), CONCURRENT_REQUESTS=2)
    other, entered = passage(caller=READER), passage(caller=READER)
    made.enter(other)
    made.enter(entered)
    made.long_lived(entered)
    assert made.in_flight.held("token:tok_1") == 1
    made.leave(entered, _answer()).close()
    made.close(entered, None)
    assert made.in_flight.held("token:tok_1") == 1  # not given back again


def test_a_request_turning_long_lived_after_its_answer_leaves_the_slot_to_the_answer(passage):
    made = limits(Counter(), CONCURRENT_REQUESTS=2)
    other, entered = passage(caller=READER), passage(caller=READER)
    made.enter(other)
    made.enter(entered)
    answer = made.leave(entered, _answer())
    made.long_lived(entered)
    assert made.in_flight.held("token:tok_1") == 2  # the answer gives it back
    answer.close()
    assert made.in_flight.held("token:tok_1") == 1


def test_the_limits_parse_as_the_limits_library_reads_them():
    made = limits(RATE_LIMIT="20/second")
    assert made.items["token"] == [parse("20/second")]
