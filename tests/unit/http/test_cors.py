"""CORS (inventory/http/cors.py): only the configured origins, none by
default, and the document says which."""
from types import SimpleNamespace

from flask import Flask

from inventory.http.cors import describe, init_app


def _app(origins):
    app = Flask(__name__)
    app.add_url_rule("/x", "x", lambda: "ok")
    init_app(app, SimpleNamespace(CORS_ORIGINS=origins))
    return app


def test_no_origin_by_default():
    app = _app([])
    answer = app.test_client().get("/x", headers={"Origin": "https://dash.example"})
    assert "Access-Control-Allow-Origin" not in answer.headers
    assert app.config["INVENTORY_CORS"] == describe([]) and "lists no origins" in describe([])


def test_a_listed_origin_may_read_the_answers_headers_without_credentials():
    app = _app(["https://dash.example"])
    client = app.test_client()
    allowed = client.get("/x", headers={"Origin": "https://dash.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://dash.example"
    assert "ETag" in allowed.headers["Access-Control-Expose-Headers"]
    assert "Access-Control-Allow-Credentials" not in allowed.headers
    other = client.get("/x", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers
    assert describe(["https://dash.example"]).endswith("`https://dash.example`.")
