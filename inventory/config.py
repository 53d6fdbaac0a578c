"""Configuration, read from the environment only (twelve-factor), and only
here: every setting is declared once below, with what it means.
docs/configuration.md's table is made from these declarations
(`scripts/docs-tables`); a test fails when it is stale, and when any other
module reads the environment."""
import os
from dataclasses import dataclass
from typing import Callable

from inventory.core import outbound
from inventory.core.caps import (
    DEFAULT_QUOTAS,
    MAX_BODY_BYTES,
    UNSCOPED_WEBHOOKS,
    WEBHOOK_DELIVERIES_PER_ORGANIZATION,
    WEBHOOK_DELIVERIES_PER_WORKER,
    WEBHOOK_LEASE,
    WEBHOOK_TIMEOUT,
)

TRUE = frozenset({"1", "true", "yes", "on"})


def flag(text):
    return text.strip().lower() in TRUE


def lower_list(text):
    return [item.strip().lower() for item in text.split(",") if item.strip()]


def text_list(text):
    return [item.strip() for item in text.split(",") if item.strip()]


def lower(text):
    return text.strip().lower()


# the hosts a local run answers by default (ALLOWED_HOSTS)
LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "[::1]")


@dataclass(frozen=True)
class Setting:
    """One environment variable. Unset or empty, it is `default` (a flag:
    unset only; an empty flag is off); else `read` of its text."""

    name: str
    default: object
    meaning: str  # the manual's words (Markdown, links relative to docs/)
    read: Callable = str
    attribute: str | None = None  # Config's name for it, when not `name`
    shown_default: str | None = None  # the manual's Default, when the value says too little

    def value(self, environ):
        text = environ.get(self.name)
        if self.read is flag:
            return self.default if text is None else flag(text)
        return self.default if not text else self.read(text)

    @property
    def default_text(self):
        if self.shown_default is not None:
            return self.shown_default
        if self.default is None or self.default == []:
            return "unset"
        if isinstance(self.default, bool):
            return f"`{int(self.default)}`"
        return f"`{self.default}`"


SETTINGS = (
    # -- the store
    Setting("MONGODB_URI", None, "MongoDB connection string. The database is `MONGODB_DB` if "
            "set, else the one named in the URI, else `inventory`.",
            shown_default="unset: embedded store"),
    Setting("MONGODB_DB", None, "Database name; overrides the URI's."),
    Setting("MONGODB_TIMEOUT_MS", 5000, "How long to wait for the database before answering "
            "503: while it is away (at start too), every request that needs it answers 503 "
            "within this (see [Reliability](reliability.md)).", int),
    Setting("INVENTORY_DATA_DIR", None,
            "Without `MONGODB_URI`: the directory the embedded store journals every write to "
            "and restores itself from at start (see [Reliability](reliability.md)), and where "
            "it keeps the admin token it makes. Only one process may use it at a time. Empty "
            "or unset: memory only. Unused with `MONGODB_URI`.",
            shown_default="unset: memory only; `.data` under `scripts/serve` and the `Procfile`"),
    Setting("INVENTORY_FSYNC", "everysec",
            "When the journal is forced to disk, as Redis' `appendfsync`: `always` before each "
            "write is answered (a machine crash loses nothing acknowledged; each write waits "
            "for the disk), `everysec` once a second from a background thread (a machine "
            "crash loses about the last second of writes), `no` when the OS chooses (Linux: "
            "within about 30 s). A crash or kill of the process alone loses nothing under any "
            "of them.", lower),
    Setting("SECRET_KEY", None,
            "Signs continuation tokens. Unset on MongoDB: a random key is made once and kept "
            "in the database (collection `settings`), so every worker agrees. Unset on the "
            "embedded store: random per process, or, with `INVENTORY_DATA_DIR`, made once and "
            "kept there, so continuation tokens outlive a restart.", shown_default="generated"),
    # -- access
    Setting("INVENTORY_ADMIN_TOKEN", None,
            "Accepted as an unscoped admin token named `admin`. Unset on the embedded store: "
            "one is made at the first start and kept in `INVENTORY_DATA_DIR/admin-token` "
            "(0600), where later starts find it again (without a data directory, it lasts as "
            "long as the process); shown on the terminal, never logged (see "
            "[Limits](limits.md#your-first-token))."),
    Setting("TRUST_PROXY", False,
            "`1` behind a PaaS router: honour `X-Forwarded-Proto`/`-Host` (one hop) for "
            "`$schema`, `Location` and `Link` URLs. Leave off when clients reach the service "
            "directly, or they could forge those URLs.", flag),
    Setting("ALLOWED_HOSTS", [],
            "Comma-separated hosts that may appear in generated URLs (`Location`, `Link`, "
            "`$schema`): names, `.example.com` for a domain and its subdomains, `*` for any; "
            "any port. A request naming another `Host` is a 400. Default: `localhost`, "
            "`127.0.0.1`, `[::1]`; with `TRUST_PROXY=1`, any (the router decides which hosts "
            "reach the service). Set it when clients reach the service directly under another "
            "name.", lower_list, shown_default="loopback; any behind `TRUST_PROXY`"),
    Setting("CORS_ORIGINS", [],
            "Comma-separated origins whose browser pages may call the API "
            "(`https://dash.example.com`, or `*`).", text_list, shown_default="unset: none"),
    Setting("INVENTORY_DEMO", False, "`1`: load the demo estate at start.", flag,
            attribute="DEMO"),
    # -- serving (read by gunicorn.conf.py)
    Setting("PORT", 8000, "Port gunicorn binds (`gunicorn.conf.py`); webhooks' bodies name "
            "it in their `$schema` URL when the service answers on a loopback host.", int),
    Setting("WEB_CONCURRENCY", 1, "gunicorn worker processes; more than one needs "
            "`MONGODB_URI` (on the embedded store a start with more is refused, and a worker "
            "added at run time, `kill -TTIN`, is not added, with a log line). About one per "
            "core.", int),
    Setting("GUNICORN_CONNECTIONS", 2000,
            "Connections a worker holds at once, idle ones and change-feed watchers included; "
            "past it, a 503. Fewer when the open-files limit (raised to its hard limit at "
            "start) leaves no room beside 64 kept for the worker's own files; the worker says "
            "so at start.", int),
    Setting("GUNICORN_KEEPALIVE", 5, "Seconds a connection may wait for the first byte of its "
            "next request before it is closed.", int),
    Setting("GUNICORN_TIMEOUT", 30, "Seconds a worker may miss its heartbeat before gunicorn "
            "replaces it: only a loop held that long misses it, never a slow client.", int),
    Setting("LOG_LEVEL", "INFO", "Level of the JSON logs under gunicorn."),
    Setting("PROMETHEUS_MULTIPROC_DIR", None,
            "Folder for prometheus_client's multiprocess mode: with several workers, "
            "`/metrics` counts all of them, not whichever answers. gunicorn empties it at "
            "start and drops a dead worker's live gauges.",
            shown_default="unset; `/tmp/inventory-metrics` in `compose.yaml` and `app.json`"),
    # -- limits (see docs/limits.md)
    Setting("RATE_LIMIT", "1000 per minute",
            "Requests per token (a `limits` string: `N per second`, `minute`, `hour` or `day`, "
            "or `N/minute`; several separated by `;`); see [Limits](limits.md). The bootstrap "
            "admin token is exempt. A bad value refuses to start."),
    Setting("RATE_LIMIT_ANONYMOUS", "60 per minute",
            "Requests per client address without a valid token."),
    Setting("RATE_LIMIT_ORGANIZATION", "3000 per minute",
            "Requests of all the tokens of one organization together: more tokens never "
            "multiply what one tenant may send."),
    Setting("CONCURRENT_REQUESTS", 4,
            "Requests one token (or address) may have in flight in one worker process, each "
            "until its answer's last byte is sent (the feed's streams and waits are not "
            "among them: they count in their tenant's share); `0`: no limit.", int),
    *(Setting(f"QUOTA_{kind.upper()}", count,
              f"The {kind} an organization may hold unless an unscoped admin sets its own "
              "`quotas`.", int) for kind, count in DEFAULT_QUOTAS.items()),
    Setting("QUOTA_UNSCOPED_WEBHOOKS", UNSCOPED_WEBHOOKS,
            "Webhooks of unscoped admins (`organization` null: they see every organization's "
            "events), all together, service-wide: they belong to no organization, so no "
            "organization's quota counts them. Past it, a create is a 403. Lowering it deletes "
            "none: creates are refused until fewer are held.", int),
    Setting("EVENTS_RETENTION_DAYS", 30, "How long the change feed keeps events (see "
            "[Events](events.md)); a TTL index on MongoDB.", int),
    Setting("SCAN_RETENTION_DAYS", 365, "Days a scan is kept after it was recorded (whatever "
            "its `scanned_on`; a TTL index, which `create-indexes` changes in place).", int),
    Setting("SCAN_RETENTION_COUNT", 1000, "Scans kept per cluster, the newest by `scanned_on` "
            "(a cluster's `last_scanned_on` stays whatever its newest scan made it).", int),
    # -- webhooks (see docs/integrations.md)
    Setting("WEBHOOK_ALLOWED_HOSTS", [],
            "Comma-separated webhook targets exempt from the SSRF guard (see "
            "[Integrations](integrations.md#webhooks)): they may be, or resolve to, addresses "
            "that are not globally routable (loopback, private, carrier-grade NAT, ...), and "
            "may be `http://`. Each entry is a host name or IP literal, exactly (no "
            "wildcards), with an optional port: `hooks.internal:8443`, `10.0.0.7:443`, "
            "`[fd00::7]:8443`. With a port, only that port of the host is allowed (a URL "
            "without a port has its scheme's, 443 or 80); without one, every port of it. "
            "**Name the port**: a host allowed on every port lets an admin probe its ports and "
            "read the answers in `/webhooks/{id}/deliveries`. A bare IPv6 literal (`fd00::7`) "
            "takes no port; with one it is `[fd00::7]:8443`. A malformed entry refuses to "
            "start.", lower_list, shown_default="unset: none"),
    Setting("WEBHOOK_DELIVERY", True,
            "`0`: this process delivers no webhooks (another process of the deployment does); "
            "webhooks are still made, listed and changed here.", flag),
    Setting("WEBHOOK_LEASE_SECONDS", WEBHOOK_LEASE,
            "Seconds a worker holds a webhook's delivery (renewed as it goes): how long a "
            "crashed worker's webhooks wait before another worker takes them over.", int,
            attribute="WEBHOOK_LEASE"),
    Setting("WEBHOOK_DELIVERIES_PER_WORKER", WEBHOOK_DELIVERIES_PER_WORKER,
            "Webhook deliveries one process runs at once (each a greenlet and a connection, "
            f"for up to the {WEBHOOK_TIMEOUT:g} s timeout). A quarter of them (rounded down) are kept for "
            "organizations that hold none: an organization that holds one takes another only "
            "while more than that are free. See [Integrations](integrations.md#webhooks).",
            int),
    Setting("WEBHOOK_DELIVERIES_PER_ORGANIZATION", WEBHOOK_DELIVERIES_PER_ORGANIZATION,
            "One organization's share of those (the unscoped admins' webhooks share one as if "
            "they were an organization).", int),
)


class Config:
    """Settings for one app instance; `create_app(config)` takes an instance.
    Each setting is an attribute (its `attribute` or its name); `overrides`
    set any of them, whatever the environment says."""

    def __init__(self, environ=None, **overrides):
        environ = os.environ if environ is None else environ
        for setting in SETTINGS:
            setattr(self, setting.attribute or setting.name, setting.value(environ))
        # Print start-up notices (the local admin token); set when serving.
        self.ANNOUNCE = False
        self.TESTING = False
        self.MAX_BODY_BYTES = MAX_BODY_BYTES
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
