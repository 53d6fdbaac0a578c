"""Browser pages on other origins (CORS), with flask-cors: only the origins
of CORS_ORIGINS, none by default. A page may send what the API reads
(the bearer token, JSON, the conditional and idempotency headers) and read
what it answers (ETag, Location, Link, the rate headers). Tokens travel in
`Authorization`, never in cookies, so credentials mode stays off."""
from flask_cors import CORS

ALLOWED_HEADERS = ["Authorization", "Content-Type", "If-Match", "If-None-Match",
                   "Idempotency-Key", "X-Request-ID"]
EXPOSED_HEADERS = ["ETag", "Location", "Link", "X-Request-ID", "Retry-After", "RateLimit",
                   "RateLimit-Policy", "Idempotent-Replayed"]


def describe(origins):
    """What the OpenAPI document says of it."""
    if not origins:
        return ("Browser pages on other origins are not allowed (CORS): this deployment "
                "lists no origins (CORS_ORIGINS).")
    return ("Browser pages on these origins may call the API (CORS): "
            + ", ".join(f"`{origin}`" for origin in origins) + ".")


def init_app(app, config):
    app.config["INVENTORY_CORS"] = describe(config.CORS_ORIGINS)
    if config.CORS_ORIGINS:
        CORS(app, origins=config.CORS_ORIGINS, allow_headers=ALLOWED_HEADERS,
             expose_headers=EXPOSED_HEADERS, supports_credentials=False, max_age=600)
