"""Headers every answer gets right (inventory/http/response_headers.py)."""
from types import SimpleNamespace

from flask import Response

from inventory.http.response_headers import finish_response


def test_no_content_type_without_a_body():
    response = finish_response(SimpleNamespace(operation=None), Response(status=204))
    assert "Content-Type" not in response.headers
    kept = finish_response(SimpleNamespace(operation=None), Response("x", status=200))
    assert kept.headers["Content-Type"].startswith("text/html")


def test_an_answer_holding_a_secret_is_kept_by_no_cache():
    secret = finish_response(SimpleNamespace(operation=SimpleNamespace(secret=True)), Response())
    plain = finish_response(SimpleNamespace(operation=SimpleNamespace(secret=False)), Response())
    assert secret.headers["Cache-Control"] == "no-store"
    assert "Cache-Control" not in plain.headers
