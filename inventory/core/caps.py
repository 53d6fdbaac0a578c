"""The server layer's limits, each written once: the serving model, the app
and the documentation read them from here."""

# The longest request line the API document allows: a 2,000-character filter
# percent-encoded (up to 12 bytes a character), a 2,048-character continue
# token and the path, about 26 KiB. gunicorn's own cap is 8,190.
REQUEST_LINE_BYTES = 32768
REQUEST_HEADER_FIELDS = 100
REQUEST_HEADER_FIELD_BYTES = 8190

MAX_BODY_BYTES = 1024 * 1024  # a request body, chunked or not

HEADER_TIMEOUT = 10.0  # seconds to send the request line and headers
REQUEST_TIMEOUT = 30.0  # seconds for the body and the answer, once the head is in

# Descriptors a worker keeps free of client connections: its listening
# socket, the journal, log files, the database's connections.
DESCRIPTOR_RESERVE = 64

# The change feed's streams (Server-Sent Events), per worker process: each is
# a greenlet waiting on the feed, a few kilobytes.
MAX_STREAMS = 500
STREAM_SECONDS = 300  # a stream ends after this; the client resumes with Last-Event-ID
# One tenant's share of a worker's long-lived requests (streams and waits):
# an organization's, however many tokens it mints, so that one tenant cannot
# take them all (an unscoped token's own). Past it, the oldest of the
# token's (else of its tenant's) ends for the newcomer: nothing is refused.
# They hold no slot of CONCURRENT_REQUESTS (requests in flight).
LONG_LIVED_PER_ORGANIZATION = 100
# How often a stream or a wait looks whether its client went away (closed
# tab, dropped script), or whether a newer one of its tenant took its share:
# a departed client's share is free again within a couple of these.
PRESENCE_CHECK_SECONDS = 1.0
# How often a stream or a wait looks again whether its token was revoked
# (a revoke in the same process ends them at once).
REVOCATION_CHECK_SECONDS = 1.0
STREAM_KEEPALIVE_SECONDS = 15  # a comment at least this often keeps proxies from cutting it

# What an organization may hold unless QUOTA_* say otherwise or an unscoped
# admin sets its own `quotas` (inventory.store.quotas).
DEFAULT_QUOTAS = {"platforms": 100, "clusters": 1000, "tokens": 100, "webhooks": 20,
                  "rollouts": 20}

# The embedded store's envelope (docs/limits.md): the estate it is built and
# measured for on one worker; past it the service says so at start and in
# /readyz, and keeps its promises as far as it can.
ENVELOPE_CLUSTERS = 100_000
ENVELOPE_SCANS = 1_000_000

# The most clusters one answer of an integration (Argo CD's plugin generator,
# Prometheus' discovery) lists: they are not paged, and a truncated list
# would make Argo CD delete the applications of the clusters left out, so
# more matches than this are an error (422) that says to narrow the filter.
MAX_INTEGRATION_CLUSTERS = 10_000

# A list answered as CSV (inventory.http.csv_export) holds the whole match or
# is refused: more records than this, or more columns (one per label key the
# match holds), are a 422 before the first byte. Records: the envelope's
# clusters, so one CSV can hold the whole estate.
MAX_CSV_ROWS = ENVELOPE_CLUSTERS
MAX_CSV_COLUMNS = 1000

# Webhooks (inventory/integrations/webhooks.py): a receiver acknowledges an
# event with any 2xx within WEBHOOK_TIMEOUT seconds; anything else is retried
# after WEBHOOK_BACKOFF[attempt] seconds (the last repeating) until the first
# failure is WEBHOOK_GIVE_UP seconds old, when the webhook is made inactive.
WEBHOOK_TIMEOUT = 10.0
WEBHOOK_BACKOFF = (5, 30, 120, 600, 1800, 3600, 2 * 3600, 4 * 3600, 8 * 3600)
WEBHOOK_GIVE_UP = 24 * 3600
WEBHOOK_LEASE = 60  # seconds a worker holds a webhook's delivery; renewed as it goes
# Deliveries in flight at once, per process, and per organization (its
# share): a quarter of them are kept for organizations that hold none, so
# that tenants whose receivers never answer cannot hold every one
# (WEBHOOK_DELIVERIES_PER_WORKER, ..._PER_ORGANIZATION say otherwise).
WEBHOOK_DELIVERIES_PER_WORKER = 32
WEBHOOK_DELIVERIES_PER_ORGANIZATION = 4
# Webhooks of unscoped admins (of no organization, seeing every one's
# events), all together, unless QUOTA_UNSCOPED_WEBHOOKS says otherwise.
UNSCOPED_WEBHOOKS = 20
WEBHOOK_DELIVERY_LOG = 100  # attempts kept per webhook, newest
WEBHOOK_RESPONSE_BYTES = 64 * 1024  # of a receiver's answer, read then dropped
MAX_WEBHOOK_URL = 2048

# The error body (inventory.http.problems; its schema, schemas.common)
MAX_ENTRIES = 20  # a body of 60,000 bad label keys must not answer 10 MB
MAX_VALUE_BYTES = 1024  # an echoed value larger than this is shortened

# Scans that observe the cluster (schemas/scans.py bounds each part): a
# scan's body, and how many of a cluster's newest scans keep what they
# observed (older ones keep `scanned_on` and `agent`), so that the embedded
# store's envelope holds with every cluster observed (docs/sizing.md).
MAX_SCAN_BODY_BYTES = 256 * 1024
OBSERVED_SCANS_KEPT = 2
OBSERVED_SCANS_SPARE = 3  # joining the kept ones, after which the older let go (in one write)
