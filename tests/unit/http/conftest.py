"""Fixtures of the HTTP layer's tests; those that reach its private parts
each say why (tests/unit/test_private_reach.py holds them to it)."""
import pytest

from inventory.http.gate import Passage


@pytest.fixture
def fingerprint_parse():
    """`parse(body)`: the value the idempotency fingerprint is made of.
    Private: `inventory.http.idempotency._parsed` is one step of the
    fingerprint, inside a request; through HTTP a test sees only whether a
    retry matched, not the value for every body shape."""
    from inventory.http.idempotency import _parsed

    return _parsed


@pytest.fixture
def coroutine_answers():
    """`answers(application)`: the answers `Application.ensure_sync` keeps,
    {function: whether a coroutine}. Private: their number is the bound the
    test holds; no public call counts them."""
    return lambda application: application._coroutine_functions


@pytest.fixture(scope="session")
def response_schemas():
    """`response_schemas(app)`: {(METHOD, rule, status): schema instance} of
    every declared answer with a body, the instances the views dump with.
    Private: flask-smorest keeps a view's declared answers in its `_apidoc`;
    the OpenAPI document holds only their names, not the instances."""
    from marshmallow import Schema

    def of(app):
        found = {}
        for rule in app.url_map.iter_rules():
            view_class = getattr(app.view_functions[rule.endpoint], "view_class", None)
            for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
                view = getattr(view_class, method.lower(), None)
                responses = getattr(view, "_apidoc", {}).get("response", {}).get("responses", {})
                for status, documented in responses.items():
                    for answer in documented:
                        if isinstance(answer.get("schema"), Schema):
                            found[(method, rule.rule, status)] = answer["schema"]
        return found
    return of


@pytest.fixture
def passage(app):
    """`passage(path, method=, headers=)`: the gate's Passage of a request,
    in its request context (popped at the end)."""
    contexts = []

    def make(path="/organizations", method="GET", headers=None):
        context = app.test_request_context(path, method=method, headers=headers or {})
        context.push()
        contexts.append(context)
        return Passage(context.request)
    yield make
    for context in reversed(contexts):
        context.pop()
