"""The limits table of docs/limits.md, made from the constants the code
enforces (never typed by hand): `scripts/docs-limits` rewrites it between
its markers; tests/api/test_stated_limits.py fails when it is stale."""
import os
import pathlib
import sys
from unittest import mock

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BEGIN, END = "<!-- limits:begin (scripts/docs-limits) -->", "<!-- limits:end -->"
PAGE = ROOT / "docs" / "limits.md"


def rows():
    """(what, the limit, where it is enforced) of every documented limit."""
    from inventory.config import Config
    from inventory.core import caps, filtering, grouping, labels
    from inventory.http import idempotency
    from inventory.store import base, pages
    from schemas import clusters, common, events, scans

    with mock.patch.dict(os.environ, {}, clear=True):  # the defaults, whatever is set here
        config = Config()

    def n(value):
        return f"{value:,}"
    return [
        ("Page size (`limit`)", f"0 to {n(common.MAX_LIMIT)}; 0 or absent: {common.DEFAULT_LIMIT}",
         "schemas/common.py"),
        ("Records one page examines", n(pages.MAX_EXAMINED), "inventory/store/pages.py"),
        ("Filter length", f"{n(filtering.MAX_LENGTH)} characters", "inventory/core/filtering.py"),
        ("Filter comparisons and NOTs", n(filtering.MAX_TERMS), "inventory/core/filtering.py"),
        ("Filter nesting", f"{filtering.MAX_DEPTH} levels", "inventory/core/filtering.py"),
        ("Request body", f"{caps.MAX_BODY_BYTES // 2**20} MiB (413)", "inventory/core/caps.py"),
        ("Request line", f"{caps.REQUEST_LINE_BYTES // 1024} KiB (414)", "inventory/core/caps.py"),
        ("Header fields", f"{n(caps.REQUEST_HEADER_FIELDS)}, each at most "
         f"{n(caps.REQUEST_HEADER_FIELD_BYTES)} bytes (431)", "inventory/core/caps.py"),
        ("Head of a request", f"{caps.HEADER_TIMEOUT:g} s (408)", "inventory/core/caps.py"),
        ("Body and answer", f"{caps.REQUEST_TIMEOUT:g} s", "inventory/core/caps.py"),
        ("Labels per cluster", f"{labels.MAX_LABELS}; keys {labels.MAX_LABEL_KEY} characters, "
         f"values {labels.MAX_LABEL_VALUE}", "inventory/core/labels.py"),
        ("A cluster's `endpoint`", f"{n(clusters.MAX_ENDPOINT)} characters",
         "schemas/clusters.py"),
        ("A stored record", f"{base.MAX_RECORD_BYTES // 1024} KiB", "inventory/store/base.py"),
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
         "24 h", "inventory/http/idempotency.py"),
        ("Summary groups", f"{grouping.MAX_FIELDS} `group_by` fields; the "
         f"{n(grouping.MAX_GROUPS)} largest groups answered", "inventory/core/grouping.py"),
        ("Blockers (`:blockers`)", f"the {n(grouping.MAX_GROUPS)} largest answered",
         "inventory/core/grouping.py"),
        ("A wait on the feed (`wait`)", f"{events.MAX_WAIT} s", "schemas/events.py"),
        ("Event streams per worker", f"{n(caps.MAX_STREAMS)}, each ending after "
         f"{caps.STREAM_SECONDS} s", "inventory/core/caps.py"),
        ("Streams and waits of one organization per worker",
         f"{caps.LONG_LIVED_PER_ORGANIZATION} (429 past them)", "inventory/core/caps.py"),
        ("A revoked token's streams and waits", f"end at once in the revoking process, "
         f"within {caps.REVOCATION_CHECK_SECONDS:g} s elsewhere", "inventory/core/caps.py"),
        ("Rate per token (`RATE_LIMIT`)", config.RATE_LIMIT, "inventory/config.py"),
        ("Rate per address without a token (`RATE_LIMIT_ANONYMOUS`)",
         config.RATE_LIMIT_ANONYMOUS, "inventory/config.py"),
        ("Rate per organization, all its tokens together (`RATE_LIMIT_ORGANIZATION`)",
         config.RATE_LIMIT_ORGANIZATION, "inventory/config.py"),
        ("Requests in flight per token (`CONCURRENT_REQUESTS`)", str(config.CONCURRENT_REQUESTS),
         "inventory/config.py"),
        ("Quotas per organization (`QUOTA_*`)", ", ".join(
            f"{kind} {n(count)}" for kind, count in caps.DEFAULT_QUOTAS.items()),
         "inventory/core/caps.py"),
        ("Scans kept per cluster", f"{config.SCAN_RETENTION_COUNT:,} newest (up to a tenth "
         f"more between trims), {config.SCAN_RETENTION_DAYS} days", "inventory/config.py"),
        ("Events kept (`EVENTS_RETENTION_DAYS`)", f"{config.EVENTS_RETENTION_DAYS} days",
         "inventory/config.py"),
        ("The embedded store's envelope", f"{n(caps.ENVELOPE_CLUSTERS)} clusters, "
         f"{n(caps.ENVELOPE_SCANS)} scans (past it: said at start and in `/readyz`)",
         "inventory/core/caps.py"),
        ("Clusters in an integration's answer", n(caps.MAX_INTEGRATION_CLUSTERS),
         "inventory/core/caps.py"),
        ("Webhook acknowledgement", f"a 2xx within {caps.WEBHOOK_TIMEOUT:g} s; retried for "
         f"{caps.WEBHOOK_GIVE_UP // 3600} h", "inventory/core/caps.py"),
        ("Webhook deliveries in flight per worker (`WEBHOOK_DELIVERIES_PER_WORKER`, "
         "`WEBHOOK_DELIVERIES_PER_ORGANIZATION`)", f"{config.WEBHOOK_DELIVERIES_PER_WORKER}, "
         f"{config.WEBHOOK_DELIVERIES_PER_ORGANIZATION} per organization, a quarter kept for "
         "organizations that hold none", "inventory/config.py"),
        ("Webhooks of unscoped admins, all together (`QUOTA_UNSCOPED_WEBHOOKS`)",
         str(config.QUOTA_UNSCOPED_WEBHOOKS), "inventory/config.py"),
    ]


def table():
    lines = ["| limit | value | enforced in |", "|---|---|---|"]
    lines += [f"| {what} | {value} | `{where}` |" for what, value, where in rows()]
    return "\n".join(lines)


def rendered(page_text):
    head, rest = page_text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table()}\n{END}{tail}"


if __name__ == "__main__":
    PAGE.write_text(rendered(PAGE.read_text()))
    print(f"{PAGE.relative_to(ROOT)}: the limits table rewritten from the constants")
