"""What wraps the WSGI app (inventory/http/wsgi_middleware.py): `/path/`
served as `/path`, and the proxy's forwarded host only with TRUST_PROXY."""
from types import SimpleNamespace

from flask import Flask, request

from inventory.http.wsgi_middleware import IgnoreTrailingSlash, init_app


def test_a_trailing_slash_is_served_as_the_path_without_it():
    seen = []
    app = IgnoreTrailingSlash(lambda environ, start: seen.append(environ["PATH_INFO"]) or [])
    for path in ("/kubeclusters/", "/kubeclusters//", "/", "/a"):
        app({"PATH_INFO": path}, None)
    assert seen == ["/kubeclusters", "/kubeclusters", "/", "/a"]


def _host_seen(trust_proxy):
    app = Flask(__name__)
    app.add_url_rule("/where", "where", lambda: request.host)
    init_app(app, SimpleNamespace(TRUST_PROXY=trust_proxy))
    return app.test_client().get("/where/", headers={"X-Forwarded-Host": "forged.example"},
                                 base_url="http://inventory.example").get_data(as_text=True)


def test_the_forwarded_host_is_believed_only_behind_a_trusted_proxy():
    assert _host_seen(trust_proxy=False) == "inventory.example"
    assert _host_seen(trust_proxy=True) == "forged.example"
