"""inventory.http.conditional, on its own: a record's ETag, If-Match
(strong comparison: weak tags allow nothing, `*` any) and If-None-Match
(weak comparison: a 304 carrying the ETag), each honoured only by the
operations that declare it, and either header bounded (422 past
MAX_ETAG_LIST). Through HTTP: tests/api (each resource's conditional tests)."""
from types import SimpleNamespace

import pytest

from inventory.http.conditional import MAX_ETAG_LIST, etag, if_match, not_modified, read, with_etag
from inventory.http.errors import RequestError

RECORD = SimpleNamespace(revision="r7")


@pytest.fixture
def asking(app):
    """`asking(method, path, headers)`: a request context of that request
    (what the conditional helpers read), popped at the end."""
    contexts = []

    def enter(method, path, headers=None):
        context = app.test_request_context(path, method=method, headers=headers or {})
        context.push()
        contexts.append(context)
    yield enter
    for context in reversed(contexts):
        context.pop()


def test_the_etag_is_the_revision_quoted_and_rides_the_answer():
    assert etag(RECORD) == '"r7"'
    assert with_etag(RECORD) == (RECORD, 200, {"ETag": '"r7"'})
    assert with_etag(RECORD, 201, {"Location": "/x"}) == (
        RECORD, 201, {"ETag": '"r7"', "Location": "/x"})


@pytest.mark.parametrize("header, allowed", [
    (None, None), ("*", None), ('"r1"', ["r1"]), ('"r1", "r2"', ["r1", "r2"]),
    ('W/"r1", "r2"', ["r2"]), ('W/"r1"', [])])
def test_if_match_allows_the_strong_tags_it_names_or_any(asking, header, allowed):
    asking("PATCH", "/kubeclusters/c1", {"If-Match": header} if header is not None else {})
    found = if_match()
    assert (sorted(found) if found is not None else None) == allowed  # in no order


def test_if_match_is_ignored_by_an_operation_that_does_not_declare_it(asking):
    asking("POST", "/kubeclusters", {"If-Match": '"r1"'})
    assert if_match() is None


@pytest.mark.parametrize("header", ["If-Match", "If-None-Match"])
def test_a_header_longer_than_the_bound_is_refused_as_a_request_error(asking, header):
    method = "PATCH" if header == "If-Match" else "GET"
    at_bound = ", ".join(f'"r{i}"' for i in range(400))[:MAX_ETAG_LIST]
    asking(method, "/kubeclusters/c1", {header: at_bound})
    (if_match() if header == "If-Match" else not_modified(RECORD))  # at the bound: read
    asking(method, "/kubeclusters/c1", {header: at_bound + " "})
    with pytest.raises(RequestError) as refused:
        if_match() if header == "If-Match" else not_modified(RECORD)
    assert (refused.value.status, refused.value.location) == (422, f"header.{header.lower()}")


@pytest.mark.parametrize("header", ['"r7"', 'W/"r7"', '"r1", "r7"', "*"])
def test_if_none_match_naming_the_current_etag_is_a_304_with_it(asking, header):
    asking("GET", "/kubeclusters/c1", {"If-None-Match": header})
    answer = not_modified(RECORD)
    assert answer.status_code == 304 and answer.headers["ETag"] == '"r7"'
    assert not answer.get_data()
    assert read(RECORD).status_code == 304


@pytest.mark.parametrize("header", [None, "", '"r1"', 'W/"r8", "r70"'])
def test_if_none_match_naming_another_etag_answers_the_record(asking, header):
    asking("GET", "/kubeclusters/c1", {"If-None-Match": header} if header is not None else {})
    assert not_modified(RECORD) is None
    assert read(RECORD) == (RECORD, 200, {"ETag": '"r7"'})


def test_if_none_match_is_ignored_by_an_operation_that_does_not_declare_it(asking):
    asking("GET", "/kubeclusters", {"If-None-Match": '"r7"'})
    assert not_modified(RECORD) is None
