"""The rows of docs/limits.md's table: every client-facing limit, made from
the constant the code enforces (never typed by hand). `scripts/docs-tables`
writes the table (scripts/docs_tables.py); tests/api/test_stated_limits.py
fails when a limit constant (every `MAX_*` of inventory/ and schemas/, every
constant of inventory/core/caps.py) is neither read here nor in UNSTATED."""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Limit constants the table leaves out, and why: none is a limit a client meets.
UNSTATED = {
    "inventory.core.caps.DESCRIPTOR_RESERVE": "a worker's own files, beside its connections",
    "schemas.scans.MAX_REQUESTS": "a counter's bound, not a client's: the largest integer "
    "every JSON client holds exactly",
    "inventory.core.caps.WEBHOOK_LEASE": "a setting (WEBHOOK_LEASE_SECONDS): docs/configuration.md",
    "inventory.core.caps.WEBHOOK_DELIVERIES_PER_WORKER": "a setting's default: the row shows "
    "the setting (WEBHOOK_DELIVERIES_PER_WORKER)",
    "inventory.core.caps.WEBHOOK_DELIVERIES_PER_ORGANIZATION": "a setting's default: the row "
    "shows the setting (WEBHOOK_DELIVERIES_PER_ORGANIZATION)",
    "inventory.core.caps.UNSCOPED_WEBHOOKS": "a setting's default (QUOTA_UNSCOPED_WEBHOOKS)",
    "schemas.fields.MAX_SAFE_INTEGER": "the JSON Schema maximum of counts the service makes",
    "inventory.core.rollouts.MAX_SOAK_LENGTH": "the longest text a soak's own grammar allows: "
    "the rollouts' row states the soak's range (PT0S to P30D)",
}


def _duration(seconds):
    return f"{seconds // 3600} h" if seconds >= 3600 and not seconds % 3600 else \
        f"{seconds // 60} min" if seconds >= 60 and not seconds % 60 else f"{seconds} s"


def rows():
    """(what, the limit, where it is enforced) of every documented limit."""
    from inventory.config import Config
    from inventory.core import caps, filtering, grouping, ids, labels, ordering, rollouts, versions
    from inventory.http import conditional, idempotency, parser
    from inventory.store import idempotency as kept_keys
    from inventory.store import pages, sessions, updates
    from schemas import clusters, common, events, organizations, scans

    config = Config({})  # the defaults, whatever this shell sets

    def n(value):
        return f"{value:,}"
    return [
        ("Page size (`limit`)", f"0 to {n(common.MAX_LIMIT)}; 0 or absent: {common.DEFAULT_LIMIT}",
         "schemas/common.py"),
        ("Records one page examines", n(pages.MAX_EXAMINED), "inventory/store/pages.py"),
        ("Filter length", f"{n(filtering.MAX_LENGTH)} characters", "inventory/core/filtering.py"),
        ("Filter comparisons and NOTs", n(filtering.MAX_TERMS), "inventory/core/filtering.py"),
        ("Filter nesting", f"{filtering.MAX_DEPTH} levels", "inventory/core/filtering.py"),
        ("A relative time in a filter (`\"-P30D\"`)", f"{n(filtering.MAX_BACK_DAYS)} days back",
         "inventory/core/filtering.py"),
        ("`order_by`", f"{ordering.MAX_ORDER_BY} characters", "inventory/core/ordering.py"),
        ("`continue`", f"{n(common.MAX_CONTINUE)} characters", "schemas/common.py"),
        ("Request body", f"{caps.MAX_BODY_BYTES // 2**20} MiB (413)", "inventory/core/caps.py"),
        ("A JSON body's nesting", f"{parser.MAX_JSON_DEPTH} levels (400)",
         "inventory/http/parser.py"),
        ("`If-Match`, `If-None-Match`", f"{n(conditional.MAX_ETAG_LIST)} characters",
         "inventory/http/conditional.py"),
        ("Request line", f"{caps.REQUEST_LINE_BYTES // 1024} KiB (414)", "inventory/core/caps.py"),
        ("Header fields", f"{n(caps.REQUEST_HEADER_FIELDS)}, each at most "
         f"{n(caps.REQUEST_HEADER_FIELD_BYTES)} bytes (431)", "inventory/core/caps.py"),
        ("Head of a request", f"{caps.HEADER_TIMEOUT:g} s (408)", "inventory/core/caps.py"),
        ("Body and answer", f"{caps.REQUEST_TIMEOUT:g} s", "inventory/core/caps.py"),
        ("Labels per cluster", f"{labels.MAX_LABELS}; keys {labels.MAX_LABEL_KEY} characters "
         f"(Kubernetes': a prefix of {labels.MAX_LABEL_PREFIX}, `/`, a name of "
         f"{labels.MAX_LABEL_NAME}), values {labels.MAX_LABEL_VALUE}", "inventory/core/labels.py"),
        ("A platform's or cluster's `name`", f"{ids.MAX_SLUG} characters (an RFC 1123 DNS label)",
         "inventory/core/ids.py"),
        ("A cluster's `version`", f"{versions.MAX_VERSION_LENGTH} characters",
         "inventory/core/versions.py"),
        ("A scan's `scanned_on`", f"0 to {n(scans.MAX_SCANNED_ON)} (9999-12-31T23:59:59Z), and "
         f"at most {scans.SCANNED_ON_AHEAD_SECONDS // 60} minutes ahead of the service's clock",
         "schemas/scans.py"),
        ("A cluster's `endpoint`", f"{n(clusters.MAX_ENDPOINT)} characters",
         "schemas/clusters.py"),
        ("A stored record", f"{updates.MAX_RECORD_BYTES // 1024} KiB", "inventory/store/updates.py"),
        ("A scan's body", f"{caps.MAX_SCAN_BODY_BYTES // 1024} KiB (413)",
         "inventory/core/caps.py"),
        ("A scan's `nodes`", f"`count` and each map's counts up to {n(scans.MAX_NODES)}; each "
         f"map {scans.MAX_NODE_VALUES} entries, keys {scans.MAX_NODE_VALUE} characters",
         "schemas/scans.py"),
        ("A scan's `deprecated_api_requests`, `findings`",
         f"{scans.MAX_DEPRECATED_APIS}, {scans.MAX_FINDINGS} entries", "schemas/scans.py"),
        ("Scans that keep what they observed", f"a cluster's {caps.OBSERVED_SCANS_KEPT} newest, "
         f"and up to {caps.OBSERVED_SCANS_SPARE} older until the next pass (older ones keep "
         "`scanned_on` and `agent`)", "inventory/core/caps.py"),
        ("Error entries listed", f"{caps.MAX_ENTRIES}; an echoed `value` over "
         f"{caps.MAX_VALUE_BYTES // 1024} KiB is shortened", "inventory/core/caps.py"),
        ("`Idempotency-Key`", f"1-{idempotency.MAX_KEY_LENGTH} visible ASCII characters; kept "
         f"{kept_keys.KEEP_FOR.total_seconds() / 3600:g} h", "inventory/http/idempotency.py"),
        ("Summary groups", f"{grouping.MAX_FIELDS} `group_by` fields, "
         f"{grouping.MAX_GROUP_BY} characters; the {n(grouping.MAX_GROUPS)} largest groups "
         "answered", "inventory/core/grouping.py"),
        ("Blockers (`:blockers`)", f"the {n(grouping.MAX_GROUPS)} largest answered",
         "inventory/core/grouping.py"),
        ("A wait on the feed (`wait`)", f"{events.MAX_WAIT} s", "schemas/events.py"),
        ("Event streams per worker", f"{n(caps.MAX_STREAMS)}, each ending after "
         f"{caps.STREAM_SECONDS} s, a comment at least every {caps.STREAM_KEEPALIVE_SECONDS} s",
         "inventory/core/caps.py"),
        ("Streams and waits of one tenant per worker (an organization's; an unscoped "
         "token's own)", f"{caps.LONG_LIVED_PER_ORGANIZATION}; past them the token's (else the "
         "tenant's) oldest ends, nothing is refused; none holds a slot in flight",
         "inventory/core/caps.py"),
        ("A stream's or wait's client gone", f"noticed within {caps.PRESENCE_CHECK_SECONDS:g} "
         "s: its share free within 5 s", "inventory/core/caps.py"),
        ("A revoked token's streams and waits", f"end at once in the revoking process, "
         f"within {caps.REVOCATION_CHECK_SECONDS:g} s elsewhere", "inventory/core/caps.py"),
        ("Rate per token (`RATE_LIMIT`)", config.RATE_LIMIT, "inventory/config.py"),
        ("Rate per address without a token (`RATE_LIMIT_ANONYMOUS`)",
         config.RATE_LIMIT_ANONYMOUS, "inventory/config.py"),
        ("Rate per organization, all its tokens together (`RATE_LIMIT_ORGANIZATION`)",
         config.RATE_LIMIT_ORGANIZATION, "inventory/config.py"),
        ("Requests in flight per token (`CONCURRENT_REQUESTS`)",
         f"{config.CONCURRENT_REQUESTS} (the feed's streams and waits not among them)",
         "inventory/config.py"),
        ("Quotas per organization (`QUOTA_*`)", ", ".join(
            f"{kind} {n(count)}" for kind, count in caps.DEFAULT_QUOTAS.items()),
         "inventory/core/caps.py"),
        ("An organization's quota (`quotas`)", f"0 to {n(organizations.MAX_QUOTA)} each",
         "schemas/organizations.py"),
        ("Scans kept per cluster", f"{config.SCAN_RETENTION_COUNT:,} newest (up to a tenth "
         f"more between trims), {config.SCAN_RETENTION_DAYS} days", "inventory/config.py"),
        ("Events kept (`EVENTS_RETENTION_DAYS`)", f"{config.EVENTS_RETENTION_DAYS} days",
         "inventory/config.py"),
        ("The embedded store's envelope", f"{n(caps.ENVELOPE_CLUSTERS)} clusters, "
         f"{n(caps.ENVELOPE_SCANS)} scans (past it: said at start and in `/readyz`)",
         "inventory/core/caps.py"),
        ("Clusters in an integration's answer", n(caps.MAX_INTEGRATION_CLUSTERS),
         "inventory/core/caps.py"),
        ("Records in a list's CSV (`format=csv`)", f"{n(caps.MAX_CSV_ROWS)}, in at most "
         f"{n(caps.MAX_CSV_COLUMNS)} columns (422 before the first byte past either)",
         "inventory/core/caps.py"),
        ("A rollout's `stages`", f"1 to {rollouts.MAX_STAGES}; each `soak` PT0S to "
         f"P{rollouts.MAX_SOAK.days}D", "inventory/core/rollouts.py"),
        ("A webhook's `url`", f"{n(caps.MAX_WEBHOOK_URL)} characters", "inventory/core/caps.py"),
        ("Webhook acknowledgement", f"a 2xx within {caps.WEBHOOK_TIMEOUT:g} s (the first "
         f"{caps.WEBHOOK_RESPONSE_BYTES // 1024} KiB of the answer read); retried after "
         + ", ".join(_duration(seconds) for seconds in caps.WEBHOOK_BACKOFF)
         + f" (the last repeating) for {caps.WEBHOOK_GIVE_UP // 3600} h",
         "inventory/core/caps.py"),
        ("A webhook's delivery log", f"the {caps.WEBHOOK_DELIVERY_LOG} newest attempts",
         "inventory/core/caps.py"),
        ("Webhook deliveries in flight per worker (`WEBHOOK_DELIVERIES_PER_WORKER`, "
         "`WEBHOOK_DELIVERIES_PER_ORGANIZATION`)", f"{config.WEBHOOK_DELIVERIES_PER_WORKER}, "
         f"{config.WEBHOOK_DELIVERIES_PER_ORGANIZATION} per organization, a quarter kept for "
         "organizations that hold none", "inventory/config.py"),
        ("Webhooks of unscoped admins, all together (`QUOTA_UNSCOPED_WEBHOOKS`)",
         str(config.QUOTA_UNSCOPED_WEBHOOKS), "inventory/config.py"),
        ("A console session ([The console](console.md))", f"ends unused "
         f"{_duration(int(sessions.IDLE.total_seconds()))}, at the latest "
         f"{_duration(int(sessions.LIFETIME.total_seconds()))} after sign-in",
         "inventory/store/sessions.py"),
    ]
