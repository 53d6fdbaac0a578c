"""What wraps the WSGI app before Flask sees a request: `/path/` served as
`/path`, and, with TRUST_PROXY, the one proxy hop's forwarded scheme and host."""
from werkzeug.middleware.proxy_fix import ProxyFix


class IgnoreTrailingSlash:
    """Serve `/path/` exactly as `/path`, with no redirect (the contract)."""

    def __init__(self, wsgi_app):
        self.wsgi_app = wsgi_app

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if len(path) > 1 and path.endswith("/"):
            environ["PATH_INFO"] = path.rstrip("/") or "/"
        return self.wsgi_app(environ, start_response)


def init_app(app, config):
    wsgi_app = IgnoreTrailingSlash(app.wsgi_app)
    if config.TRUST_PROXY:
        # one proxy hop (the PaaS router) may set the scheme and host
        wsgi_app = ProxyFix(wsgi_app, x_for=1, x_proto=1, x_host=1, x_port=1)
    app.wsgi_app = wsgi_app
