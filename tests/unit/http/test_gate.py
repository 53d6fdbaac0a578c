"""inventory.http.gate, on its own: the Passage read once per request
(its operation; whether its route is open: OPTIONS, or a route declared
with no role), and the Gate's order (ways in as written, the first answer
ending them; ways out in reverse, on every answer; closers at teardown,
only for a request the gate let in). The service's own layers in their
order: tests/unit/test_app.py."""
import pytest
from flask import Flask, Response, g

from inventory.http.gate import Gate, Passage


@pytest.mark.parametrize("method, path, is_open, operation_id", [
    ("GET", "/organizations", False, "listOrganizations"),
    ("OPTIONS", "/organizations", True, None),
    ("GET", "/healthz", True, "getHealth"),
    ("GET", "/no-such-route", False, None),
    ("OPTIONS", "/no-such-route", True, None),
])
def test_a_passage_knows_its_operation_and_whether_its_route_is_open(app, method, path,
                                                                     is_open, operation_id):
    with app.test_request_context(path, method=method) as context:
        passage = Passage(context.request)
        assert passage.open is is_open
        assert getattr(passage.operation, "operation_id", None) == operation_id
        assert passage.caller is Passage.NOT_LOOKED_UP
        assert passage.principal is None and passage.in_flight_key is None


def test_a_route_that_is_no_operation_is_open(app):
    """The docs' assets, say: served without a token."""
    with app.test_request_context("/docs/assets/swagger-ui.css") as context:
        passage = Passage(context.request)
        assert passage.operation is None and passage.open


def recording(calls):
    """(way in, way out) pairs that note their calls; `answers` says which way in answers."""
    def layer(name, answers=False):
        def way_in(passage):
            calls.append(f"in:{name}")
            return Response(name) if answers else None

        def way_out(passage, response):
            calls.append(f"out:{name}")
            response.headers[f"X-{name}"] = "1"
            return response
        return way_in, way_out
    return layer


@pytest.fixture
def plain():
    """A bare Flask app with one route, for the gate alone."""
    app = Flask(__name__)
    app.extensions["inventory.http.operations"] = {}  # no declared operations: all open
    app.add_url_rule("/", "index", lambda: "view")
    return app


def serve(app, layers, closers=()):
    gate = Gate(layers, closers)
    app.before_request(gate.enter)
    app.after_request(gate.leave)
    app.teardown_request(gate.close)
    return app.test_client()


def test_ways_in_run_in_order_and_ways_out_in_reverse_on_the_views_answer(plain):
    calls = []
    layer = recording(calls)
    response = serve(plain, [layer("a"), layer("b"), (None, None), layer("c")]).get("/")
    assert response.get_data(as_text=True) == "view"
    assert calls == ["in:a", "in:b", "in:c", "out:c", "out:b", "out:a"]
    assert {"X-a", "X-b", "X-c"} <= set(response.headers.keys())


def test_the_first_way_in_that_answers_ends_the_way_in_and_the_view_does_not_run(plain):
    calls = []
    layer = recording(calls)
    response = serve(plain, [layer("a"), layer("b", answers=True), layer("c")]).get("/")
    assert response.get_data(as_text=True) == "b"
    assert calls == ["in:a", "in:b", "out:c", "out:b", "out:a"]  # every way out, though


def test_a_way_in_that_raises_still_gets_every_way_out_on_the_error_answer(plain):
    calls = []
    layer = recording(calls)

    def refuse(passage):
        calls.append("in:refuse")
        raise PermissionError("no")
    plain.register_error_handler(PermissionError, lambda error: ("refused", 403))
    response = serve(plain, [layer("a"), (refuse, None), layer("c")]).get("/")
    assert response.status_code == 403 and "X-c" in response.headers
    assert calls == ["in:a", "in:refuse", "out:c", "out:a"]


def test_one_passage_is_shared_by_every_layer_of_a_request(plain):
    seen = []

    def keep(passage):
        seen.append(passage)
        passage.request_id = "kept"

    def read(passage, response):
        seen.append(passage)
        response.headers["X-Id"] = passage.request_id
        return response
    plain.add_url_rule("/g", "g", lambda: g.passage.request_id)
    client = serve(plain, [(keep, read)])
    response = client.get("/g")
    assert response.get_data(as_text=True) == "kept" and response.headers["X-Id"] == "kept"
    assert seen[0] is seen[1]


def test_closers_run_at_teardown_with_the_passage_and_the_error(plain):
    closed = []
    plain.add_url_rule("/fail", "fail", lambda: 1 / 0)
    client = serve(plain, [(None, None)], closers=[lambda passage, error: closed.append(
        (type(passage).__name__, type(error).__name__ if error else None))])
    client.get("/")
    client.get("/fail")
    assert closed == [("Passage", None), ("Passage", "ZeroDivisionError")]


def test_the_way_out_makes_a_passage_when_the_way_in_never_ran(plain):
    """A request whose context failed before the gate's way in: the ways out
    still run, on a Passage of their own; nothing is closed."""
    gate = Gate([(None, lambda passage, response: response)],
                closers=[lambda passage, error: pytest.fail("nothing to close")])
    with plain.test_request_context("/"):
        answer = gate.leave(Response("x"))
        assert isinstance(g.passage, Passage) and answer.get_data() == b"x"
    with plain.test_request_context("/"):
        gate.close(None)  # no passage: no closer runs
