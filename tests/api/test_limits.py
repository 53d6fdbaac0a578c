"""Rate limits and concurrent requests per caller (inventory/http/rate_limits.py),
through HTTP."""
import re
import socket
import threading
import time

import pytest
from limits import parse
from werkzeug.serving import make_server
from werkzeug.test import EnvironBuilder

from app import create_app
from inventory.config import Config
from inventory.http.rate_limits import get_limits
from inventory.store.rate_counters import LocalRateCounter, SharedRateCounter
from tests.conftest import (
    ADMIN_TOKEN,
    REAL_MONGO,
    ClosingClient,
    assert_problem,
    client_with,
    make_config,
)

POLICY_RE = re.compile(r'^"(token|address|organization)";q=(\d+);w=(\d+)$')
STATE_RE = re.compile(r'^"(token|address|organization)";r=(\d+);t=(\d+)$')


def make_app(**overrides):
    app = create_app(make_config(**overrides))
    app.test_client_class = ClosingClient
    return app


def token_of(app, role="reader", organization=None):
    response = client_with(app, ADMIN_TOKEN).post(
        "/tokens", json={"name": f"{role}-bot", "role": role, "organization": organization})
    assert response.status_code == 201
    return response.get_json()["token"]


def rate_state(response):
    """(policy, quota, window, remaining, reset) from the RateLimit headers."""
    policy = POLICY_RE.match(response.headers["RateLimit-Policy"])
    state = STATE_RE.match(response.headers["RateLimit"])
    assert policy and state, dict(response.headers)
    assert policy[1] == state[1]
    return policy[1], int(policy[2]), int(policy[3]), int(state[2]), int(state[3])


# -- rates ------------------------------------------------------------------

def test_a_token_past_its_rate_is_429_with_retry_after_and_ratelimit_headers():
    app = make_app(RATE_LIMIT="5 per minute")
    reader = client_with(app, token_of(app))
    for left in (4, 3, 2, 1, 0):
        response = reader.get("/organizations")
        assert response.status_code == 200
        assert rate_state(response)[:4] == ("token", 5, 60, left)
    response = reader.get("/organizations")
    body = assert_problem(response, 429)
    assert "rate limit" in body["detail"] and "5 per 60 seconds" in body["detail"]
    policy, quota, window, remaining, reset = rate_state(response)
    assert (policy, quota, remaining) == ("token", 5, 0)
    assert 1 <= int(response.headers["Retry-After"]) <= 60
    assert 0 <= reset <= 60


def test_refused_requests_do_nothing():
    app = make_app(RATE_LIMIT="2 per minute")
    writer = client_with(app, token_of(app, "writer"))
    admin = client_with(app, ADMIN_TOKEN)
    org = admin.post("/organizations", json={"title": "Acme"}).get_json()["id"]
    platform = {"organization": org, "control_plane": {"provider": "eks"},
                "infrastructure": {"cloud": {"provider": "aws"}}}
    for name in ("one", "two", "three"):
        writer.post("/kubeplatforms", json={"name": name, **platform})
    names = [p["name"] for p in admin.get("/kubeplatforms").get_json()["results"]]
    assert names == ["one", "two"]


def test_each_token_has_its_own_budget():
    app = make_app(RATE_LIMIT="3 per minute")
    first, second = (client_with(app, token_of(app)) for _ in range(2))
    for _ in range(3):
        assert first.get("/organizations").status_code == 200
    assert first.get("/organizations").status_code == 429
    assert second.get("/organizations").status_code == 200


def test_an_organizations_tokens_share_its_rate_however_many_it_mints():
    app = make_app(RATE_LIMIT="5 per minute", RATE_LIMIT_ORGANIZATION="8 per minute")
    admin = client_with(app, ADMIN_TOKEN)
    org = admin.post("/organizations", json={"title": "Acme"}).get_json()["id"]
    readers = [client_with(app, token_of(app, organization=org)) for _ in range(4)]
    statuses = [reader.get("/organizations").status_code for _ in range(3) for reader in readers]
    assert statuses.count(200) == 8  # each token is within its own 5 (3 asked): 12 without
    refused = readers[0].get("/organizations")
    body = assert_problem(refused, 429)
    assert "organization" in body["detail"] and "all its tokens" in body["detail"]
    assert rate_state(refused)[:2] == ("organization", 8)
    # revoking and minting again gives no fresh budget either
    assert client_with(app, token_of(app, organization=org)).get(
        "/organizations").status_code == 429
    other = admin.post("/organizations", json={"title": "Other"}).get_json()["id"]
    assert client_with(app, token_of(app, organization=other)).get(
        "/organizations").status_code == 200  # another tenant's budget is its own
    assert make_config().RATE_LIMIT_ORGANIZATION == "3000 per minute"


def test_requests_without_a_valid_token_are_limited_per_client_address():
    app = make_app(RATE_LIMIT="100 per minute", RATE_LIMIT_ANONYMOUS="3 per minute")
    nobody = app.test_client()
    guesser = client_with(app, "inv_not-a-token")
    for client in (nobody, guesser, nobody):
        assert_problem(client.get("/organizations"), 401)
    response = guesser.get("/kubeclusters")
    assert_problem(response, 429)
    assert rate_state(response)[:2] == ("address", 3)
    elsewhere = app.test_client()
    elsewhere.environ_base["REMOTE_ADDR"] = "192.0.2.7"
    assert_problem(elsewhere.get("/organizations"), 401)
    # a valid token is counted as itself, not as its address
    assert client_with(app, token_of(app)).get("/organizations").status_code == 200


def test_behind_a_trusted_proxy_the_forwarded_address_is_counted():
    app = make_app(TRUST_PROXY=True, RATE_LIMIT_ANONYMOUS="2 per minute")
    client = app.test_client()

    def from_(address):
        return client.get("/organizations", headers={"X-Forwarded-For": address})
    assert [from_("198.51.100.1").status_code for _ in range(3)] == [401, 401, 429]
    assert from_("198.51.100.2").status_code == 401


def test_the_bootstrap_admin_token_is_exempt():
    app = make_app(RATE_LIMIT="2 per minute")
    admin = client_with(app, ADMIN_TOKEN)
    for _ in range(10):
        response = admin.get("/organizations")
        assert response.status_code == 200
        assert "RateLimit" not in response.headers


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/openapi.json", "/docs",
                                  "/schemas/KubeCluster.json"])
def test_routes_that_need_no_token_are_exempt(path):
    app = make_app(RATE_LIMIT_ANONYMOUS="2 per minute")
    client = app.test_client()
    for _ in range(5):
        response = client.get(path)
        assert response.status_code == 200
        assert "RateLimit" not in response.headers


@pytest.mark.slow
def test_the_default_rate_stops_a_script_sending_2000_requests_as_fast_as_it_can():
    app = make_app()  # the documented default
    reader = client_with(app, token_of(app))
    statuses = [reader.get("/organizations").status_code for _ in range(2000)]
    assert 429 in statuses, "2,000 requests went through"
    allowed = parse(Config().RATE_LIMIT).amount
    assert statuses[:allowed] == [200] * allowed


@pytest.mark.slow
def test_many_threads_counting_at_once_never_fail():
    """Counted by real threads against a served app (the memory storage's
    timer once raced into a 500)."""
    import http.client
    app = make_app(RATE_LIMIT="1000000 per minute", CONCURRENT_REQUESTS=0)
    tokens = [token_of(app) for _ in range(4)]
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    statuses = []

    def hammer(secret):
        for _ in range(150):
            connection = http.client.HTTPConnection("127.0.0.1", server.server_port, timeout=30)
            connection.request("GET", "/organizations",
                               headers={"Authorization": f"Bearer {secret}"})
            statuses.append(connection.getresponse().status)
            connection.close()
    try:
        threads = [threading.Thread(target=hammer, args=(secret,))
                   for secret in tokens * 3]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        server.shutdown()
    assert set(statuses) == {200}, {s: statuses.count(s) for s in set(statuses)}


def test_a_bad_rate_limit_refuses_to_start():
    with pytest.raises(ValueError, match="RATE_LIMIT"):
        make_app(RATE_LIMIT="lots")


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's")
def test_rate_counters_live_in_a_dict_of_the_process_on_the_embedded_store():
    assert isinstance(get_limits(make_app()).counter, LocalRateCounter)


def test_rate_counters_live_in_the_services_mongodb_database():
    """Shared by every worker and instance: the store's counter, in its
    database; the client connects on first use."""
    app = make_app(MONGODB_URI="mongodb://127.0.0.1:1", MONGODB_DB="inventory_x",
                   MONGODB_TIMEOUT_MS=300)
    counter = get_limits(app).counter
    assert isinstance(counter, SharedRateCounter) and counter.fallback is not None
    assert counter is app.extensions["inventory.store"].rate_counter
    assert counter.collection.full_name == "inventory_x.rate_windows"


def test_every_limit_of_a_rate_applies_and_the_headers_name_the_tightest():
    """Windows of a minute and an hour: no sleeping, and a window's edge
    falls inside the test only once in thousands of runs."""
    app = make_app(RATE_LIMIT="2 per hour;3 per minute")
    reader = client_with(app, token_of(app))
    # the hour's is the tighter: it is the one named
    assert [rate_state(reader.get("/organizations"))[1:4] for _ in range(2)] == [
        (2, 3600, 1), (2, 3600, 0)]
    body = assert_problem(reader.get("/organizations"), 429)  # the hour's refusal...
    assert "2 per 3600 seconds" in body["detail"]
    # ...counted in the minute's (the shorter window comes first), which now refuses too
    body = assert_problem(reader.get("/organizations"), 429)
    assert "3 per 60 seconds" in body["detail"]


def test_every_limited_operation_declares_429_and_the_ratelimit_headers(client):
    document = client.get("/openapi.json").get_json()
    assert set(document["components"]["responses"]["Problem429"]["headers"]) >= {
        "Retry-After", "RateLimit", "RateLimit-Policy"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method not in ("get", "post", "patch", "delete"):
                continue
            limited = operation.get("security") != []
            assert ("429" in operation["responses"]) == limited, (method, path)
            for status, response in operation["responses"].items():
                if status.startswith("2"):
                    assert ("RateLimit" in response["headers"]) == limited, (method, path)


# -- requests in flight -----------------------------------------------------

def _start(app, token, path="/organizations"):
    """Run a request up to its answer's body, not closing it: the answer is
    still being sent. (status, close)."""
    environ = EnvironBuilder(path=path, headers={"Authorization": f"Bearer {token}"}).get_environ()
    started = []
    body = app(environ, lambda status, headers, exc_info=None: started.append(status))
    return started[0], body.close


def test_a_token_may_have_only_so_many_requests_in_flight():
    app = make_app(CONCURRENT_REQUESTS=2)
    token = token_of(app)
    reader = client_with(app, token)
    first, second = _start(app, token), _start(app, token)
    assert first[0].startswith("200") and second[0].startswith("200")
    response = reader.get("/organizations")
    body = assert_problem(response, 429)
    assert response.headers["Retry-After"] == "1"
    assert "at once" in body["detail"]
    assert client_with(app, token_of(app)).get("/organizations").status_code == 200  # others
    assert client_with(app, ADMIN_TOKEN).get("/organizations").status_code == 200
    first[1]()  # the first answer's last byte is sent
    assert reader.get("/organizations").status_code == 200
    second[1]()


def test_streams_and_waits_hold_no_slot_in_flight(in_flight_counts):
    """A person's console tabs (each a stream) and waits, and that person's
    script on the same token: all answered, however many, while the limit
    of requests in flight still holds for the script's own requests."""
    app = make_app(CONCURRENT_REQUESTS=2)
    token = token_of(app)
    reader = client_with(app, token)
    key = f"token:{_token_id(app, token)}"
    streams = [reader.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
               for _ in range(10)]
    assert [stream.status_code for stream in streams] == [200] * 10
    after = reader.get("/events?limit=100").get_json()["results"][-1]["id"]
    waits = []
    for _ in range(3):
        waits.append(threading.Thread(target=lambda: reader.get(
            "/events", query_string={"after": after, "wait": 2}), daemon=True))
        waits[-1].start()
    time.sleep(0.3)  # they wait
    assert get_limits(app).in_flight.held(key) == 0
    for _ in range(5):
        assert reader.get("/organizations").status_code == 200
    first, second = _start(app, token), _start(app, token)  # the limit still holds
    assert_problem(reader.get("/organizations"), 429)
    first[1](), second[1]()
    for stream in streams:
        stream.close()
    for wait in waits:
        wait.join(10)
    assert in_flight_counts(app) == {}


def test_failed_and_refused_requests_give_their_slot_back(in_flight_counts):
    app = make_app(CONCURRENT_REQUESTS=1, RATE_LIMIT="1000 per minute")
    reader = client_with(app, token_of(app))
    for _ in range(5):
        assert reader.get("/organizations/org_nope").status_code == 422
        assert reader.post("/organizations", json={}).status_code == 403
        assert reader.get("/organizations").status_code == 200
    assert in_flight_counts(app) == {}


def test_a_way_out_that_fails_after_the_limits_gives_the_slot_back_once(in_flight_counts):
    """A later way out that raises makes Flask drop the answer and send a
    500 through the way out again: the 500 gives the slot back, once."""
    app = make_app(CONCURRENT_REQUESTS=1)
    app.config["PROPAGATE_EXCEPTIONS"] = False  # a 500, as served
    reader = client_with(app, token_of(app))
    gate = app.extensions["inventory.http.gate"]
    position = [way.__qualname__ for way in gate.ways_out].index("finish_response")
    finish, calls = gate.ways_out[position], []

    def fails_once(passage, response):
        calls.append(response.status_code)
        if len(calls) == 1:
            raise RuntimeError("a way out failed")
        return finish(passage, response)
    gate.ways_out[position] = fails_once
    try:
        assert reader.get("/organizations").status_code == 500
    finally:
        gate.ways_out[position] = finish
    assert calls == [200, 500]
    assert in_flight_counts(app) == {}
    for _ in range(3):
        assert reader.get("/organizations").status_code == 200
    assert in_flight_counts(app) == {}


def _big_page(app, token, clusters=100):
    """An organization whose clusters' page of 100 is several megabytes."""
    admin = client_with(app, ADMIN_TOKEN)
    org = admin.post("/organizations", json={"title": "Big"}).get_json()["id"]
    admin.post("/kubeplatforms", json={"name": "big", "organization": org,
                                       "control_plane": {"provider": "eks"},
                                       "infrastructure": {"cloud": {"provider": "aws"}}})
    wide = "\U0001F600" * 256
    for n in range(clusters):
        response = admin.post("/kubeclusters", json={
            "name": f"big-{n}", "platform": "big", "environment": "production",
            "version": "1.31", "description": "\U0001F600" * 2000,
            "labels": {f"label-{i}": wide for i in range(64)}})
        assert response.status_code == 201, response.get_json()
    return "/kubeclusters?limit=100"


@pytest.mark.slow
def test_slow_readers_of_a_big_page_hold_their_slots_until_the_last_byte():
    """Over a real server: a reader that does not read its answers keeps its
    slots (so its memory stays bounded), and others are served meanwhile."""
    app = make_app(CONCURRENT_REQUESTS=2)
    token, other = token_of(app), token_of(app)
    path = _big_page(app, token)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_port
    try:
        def ask(secret):
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.connect(("127.0.0.1", port))
            sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n"
                         f"Authorization: Bearer {secret}\r\nConnection: close\r\n\r\n".encode())
            return sock

        def read_all(sock):
            data = b""
            while chunk := sock.recv(1 << 20):
                data += chunk
            sock.close()
            return data
        slow = [ask(token) for _ in range(2)]
        for sock in slow:
            assert sock.recv(16).startswith(b"HTTP/1.1 200")
        time.sleep(0.5)  # both are blocked writing their answers
        assert read_all(ask(token)).split(b"\r\n")[0].endswith(b"429 TOO MANY REQUESTS")
        answer = read_all(ask(other))
        assert answer.startswith(b"HTTP/1.1 200") and len(answer) > 4_000_000
        for sock in slow:
            read_all(sock)  # the last byte sent: the slots come back
        deadline = time.monotonic() + 5
        while get_limits(app).in_flight.held(f"token:{_token_id(app, token)}") \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert read_all(ask(token)).startswith(b"HTTP/1.1 200")
    finally:
        server.shutdown()


def _token_id(app, secret):
    with app.app_context():
        return app.extensions["inventory.store"].tokens.authenticate(secret)["id"]
