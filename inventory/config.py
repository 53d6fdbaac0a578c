"""Configuration, read from the environment only (twelve-factor)."""
import os

from inventory.core import outbound
from inventory.core.caps import (
    DEFAULT_QUOTAS,
    MAX_BODY_BYTES,
    UNSCOPED_WEBHOOKS,
    WEBHOOK_DELIVERIES_PER_ORGANIZATION,
    WEBHOOK_DELIVERIES_PER_WORKER,
    WEBHOOK_LEASE,
)


def _flag(name, default="0"):
    return os.environ.get(name, default).strip().lower() in {"1", "true", "yes", "on"}


def _list(text):
    return [item.strip().lower() for item in (text or "").split(",") if item.strip()]


# the hosts a local run answers by default (ALLOWED_HOSTS)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


class Config:
    """Settings for one app instance; `create_app(config)` takes an instance."""

    def __init__(self, **overrides):
        # Unset or empty MONGODB_URI selects the embedded in-memory store.
        self.MONGODB_URI = os.environ.get("MONGODB_URI") or None
        self.MONGODB_DB = os.environ.get("MONGODB_DB") or None
        # How long to wait for the database before answering 503.
        self.MONGODB_TIMEOUT_MS = int(os.environ.get("MONGODB_TIMEOUT_MS") or 5000)
        # Without MONGODB_URI: the directory the embedded store journals every
        # write to and is restored from at start (inventory/embedded/journal.py).
        # Unset or empty: memory only. scripts/serve and the Procfile set `.data`.
        self.INVENTORY_DATA_DIR = os.environ.get("INVENTORY_DATA_DIR") or None
        # When the journal is fsynced: always, everysec or no (as Redis' appendfsync).
        self.INVENTORY_FSYNC = (os.environ.get("INVENTORY_FSYNC") or "everysec").strip().lower()
        # Signs continuation tokens. On MongoDB, when unset, one key is
        # generated and kept in the database so every worker agrees on it.
        self.SECRET_KEY = os.environ.get("SECRET_KEY") or None
        # Honour X-Forwarded-Proto/-Host only behind a proxy that sets them
        # (a PaaS router); otherwise a client could forge the $schema URLs.
        self.TRUST_PROXY = _flag("TRUST_PROXY")
        # Accepted as an unscoped admin token named "admin".
        self.INVENTORY_ADMIN_TOKEN = os.environ.get("INVENTORY_ADMIN_TOKEN") or None
        # Load the demo estate at start (inventory.cli.demo).
        self.DEMO = _flag("INVENTORY_DEMO")
        # Print start-up notices (the local admin token); set when serving.
        self.ANNOUNCE = False
        # Hosts that may appear in generated URLs (`Location`, `Link`,
        # `$schema`); a request naming another is a 400. Comma-separated:
        # names, `.example.com` for a domain, `*` for any. Default: the
        # loopback names, or any host behind a trusted proxy (the router
        # decides which hosts reach the service).
        self.ALLOWED_HOSTS = _list(os.environ.get("ALLOWED_HOSTS"))
        # Webhook targets allowed although they are (or resolve to) addresses
        # that are not globally routable, and over plain http: a deployment's
        # own network, and tests. Exact host names or IP literals, each with
        # an optional port (`host:port`, `[v6]:port`): with one, only that
        # port; without, every port (docs/configuration.md).
        self.WEBHOOK_ALLOWED_HOSTS = _list(os.environ.get("WEBHOOK_ALLOWED_HOSTS"))
        self.WEBHOOK_DELIVERY = _flag("WEBHOOK_DELIVERY", "1")  # deliver from this process
        # seconds a worker holds a webhook's delivery: how long a crashed
        # worker's webhooks wait before another worker takes them over
        self.WEBHOOK_LEASE = int(os.environ.get("WEBHOOK_LEASE_SECONDS") or WEBHOOK_LEASE)
        # Deliveries a process runs at once, and one organization's share of
        # them (a quarter are kept for organizations that hold none).
        self.WEBHOOK_DELIVERIES_PER_WORKER = int(
            os.environ.get("WEBHOOK_DELIVERIES_PER_WORKER") or WEBHOOK_DELIVERIES_PER_WORKER)
        self.WEBHOOK_DELIVERIES_PER_ORGANIZATION = int(
            os.environ.get("WEBHOOK_DELIVERIES_PER_ORGANIZATION")
            or WEBHOOK_DELIVERIES_PER_ORGANIZATION)
        # Webhooks of unscoped admins (organization null), all together: they
        # belong to no organization, so no organization's quota counts them.
        self.QUOTA_UNSCOPED_WEBHOOKS = int(os.environ.get("QUOTA_UNSCOPED_WEBHOOKS")
                                           or UNSCOPED_WEBHOOKS)
        self.MAX_BODY_BYTES = MAX_BODY_BYTES
        # How long the change feed keeps events (a TTL index on MongoDB).
        self.EVENTS_RETENTION_DAYS = int(os.environ.get("EVENTS_RETENTION_DAYS") or 30)
        # Origins whose browser pages may call the API (CORS), comma-separated
        # (`https://dash.example.com`, or `*`); none when unset.
        self.CORS_ORIGINS = [origin.strip() for origin in
                             (os.environ.get("CORS_ORIGINS") or "").split(",") if origin.strip()]
        # Requests each token may make (a `limits` string: "N per second,
        # minute, hour or day"), and each client address without a valid
        # token; the bootstrap admin token is exempt (inventory.http.rate_limits).
        self.RATE_LIMIT = os.environ.get("RATE_LIMIT") or "1000 per minute"
        self.RATE_LIMIT_ANONYMOUS = os.environ.get("RATE_LIMIT_ANONYMOUS") or "60 per minute"
        # ...and all the tokens of one organization together: more tokens never
        # multiply what one tenant may send
        self.RATE_LIMIT_ORGANIZATION = (os.environ.get("RATE_LIMIT_ORGANIZATION")
                                        or "3000 per minute")
        # Requests one token may have in flight in one worker process, each
        # until the last byte of its answer is sent; 0: no limit.
        self.CONCURRENT_REQUESTS = int(os.environ.get("CONCURRENT_REQUESTS") or 4)
        # What an organization may hold unless an unscoped admin sets its
        # own `quotas` (inventory.store.quotas).
        for kind, default in DEFAULT_QUOTAS.items():  # QUOTA_PLATFORMS, QUOTA_CLUSTERS, ...
            setattr(self, f"QUOTA_{kind.upper()}",
                    int(os.environ.get(f"QUOTA_{kind.upper()}") or default))
        # Scans kept per cluster: none older than this many days (by
        # `scanned_on`), and at most this many, the newest (a cluster's
        # `last_scanned_on` stays whatever its newest scan made it).
        self.SCAN_RETENTION_DAYS = int(os.environ.get("SCAN_RETENTION_DAYS") or 365)
        self.SCAN_RETENTION_COUNT = int(os.environ.get("SCAN_RETENTION_COUNT") or 1000)
        self.TESTING = False
        for key, value in overrides.items():
            setattr(self, key, value)
        for entry in self.WEBHOOK_ALLOWED_HOSTS:  # a bad entry stops the start, not a request
            outbound.allowed_entry(entry)

    @property
    def allowed_hosts(self):
        if self.ALLOWED_HOSTS:
            return self.ALLOWED_HOSTS
        return ["*"] if self.TRUST_PROXY else list(LOOPBACK_HOSTS)

    @property
    def quota_defaults(self):
        return {kind: getattr(self, f"QUOTA_{kind.upper()}") for kind in DEFAULT_QUOTAS}

    @property
    def embedded(self):
        return self.MONGODB_URI is None

    @property
    def journaled(self):
        """The embedded store, kept in INVENTORY_DATA_DIR."""
        return self.embedded and bool(self.INVENTORY_DATA_DIR)
