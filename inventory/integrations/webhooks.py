"""The webhooks' deliverer: in each serving process, a loop that follows
the feed (woken only by commits of organizations that have webhooks) and
wakes the webhooks that may see each new event (its organization's and the
unscoped admins', looked up by organization: other tenants' webhooks cost
nothing), takes each one's lease in the store (one
deliverer per webhook across workers and instances) when it has something
to deliver, and POSTs its events in feed order, signed as Standard Webhooks
says, each until a 2xx within WEBHOOK_TIMEOUT acknowledges it (at least
once: a crash between the answer and the store's write repeats that event).
A failure waits out a backoff (inventory/core/caps.py); 24 h of them make
the webhook inactive.

Fairness. Each delivery runs in its own thread (a greenlet under the gevent
worker) in one of the process's slots. Woken webhooks wait in one queue per
organization; slots go to the organizations in turn (round-robin), and
within one to its webhooks in turn. One organization holds at most its
share of the slots, and one that holds any takes another only while more
than a quarter of them are free: tenants whose receivers never answer hold
at most three quarters, each slot for WEBHOOK_TIMEOUT per attempt.

Positions. A webhook's stored position moves when an event is delivered (and
past what it does not see, in the same writes). Passing events it cannot
see costs no write: this process remembers how far each webhook is known to
have nothing, from its reads and from the feed it follows (an organization
with no event since a webhook's position has nothing for it); a position
further behind than ADVANCE_BATCH slots is written once in a while by the
sweep. The design, and why: docs/design/webhooks.md"""
import collections
import heapq
import http.client
import logging
import os
import secrets
import socket
import ssl
import threading
import time
from datetime import datetime, timezone

import orjson
from standardwebhooks import Webhook as Signer

from inventory.config import LOOPBACK_HOSTS
from inventory.core import filtering, outbound
from inventory.core.caps import WEBHOOK_BACKOFF, WEBHOOK_RESPONSE_BYTES, WEBHOOK_TIMEOUT
from inventory.store.feed_waits import ALL
from inventory.store.outages import background
from inventory.store.pages import PageRequest
from schemas.events import EventSchema

log = logging.getLogger("inventory.webhooks")
POLL_SECONDS = 1.0  # how often the loop looks at retries falling due (and other processes' events)
SWEEP_SECONDS = 60.0  # how often every webhook is looked at (see `sweep`)
PAGE = 20  # events read from the feed at a time, per webhook
# A position this many slots behind what is known to hold nothing for the
# webhook is written by the sweep: a process starting reads the feed from
# the oldest position once, so that read stays short.
ADVANCE_BATCH = 100_000


def _distance(before, after):
    return int(after or "0", 16) - int(before or "0", 16)


class _Pinned:
    """http.client's connection, connecting to the vetted address (not to
    whatever the host name resolves to by then) with the URL's host for
    Host and TLS' server name."""

    def __init__(self, target, address, timeout, **kwargs):
        super().__init__(target.host, target.port, timeout=timeout, **kwargs)
        self._address = address

    def connect(self):
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host) \
            if isinstance(self, http.client.HTTPSConnection) else sock


class _HTTPS(_Pinned, http.client.HTTPSConnection):
    pass


class _HTTP(_Pinned, http.client.HTTPConnection):
    pass


def service_url(allowed_hosts, port):
    """The service's base URL in bodies made outside a request (an event's
    `$schema`): its first named host (ALLOWED_HOSTS), else `localhost`. A
    loopback host is served directly, by http on PORT, as `GET /events/{id}`
    shows it there; any other from behind its router, by https on its port."""
    named = [host for host in allowed_hosts if host != "*" and not host.startswith(".")]
    host = named[0] if named else "localhost"
    if host not in LOOPBACK_HOSTS:
        return f"https://{host}/"
    return f"http://{host}/" if port == 80 else f"http://{host}:{port}/"


class Deliverer:
    def __init__(self, app):
        self.app = app
        self.store = app.extensions["inventory.store"]
        self.allowed = tuple(app.config["WEBHOOK_ALLOWED_HOSTS"])
        self.timeout = WEBHOOK_TIMEOUT
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.slots = app.config["WEBHOOK_DELIVERIES_PER_WORKER"]
        self.share = app.config["WEBHOOK_DELIVERIES_PER_ORGANIZATION"]
        self.kept_free = self.slots // 4  # for organizations that hold no slot
        self._lock = threading.Lock()
        self._queues = {}  # organization (None: unscoped): {key: None} woken, in order
        self._turns = collections.deque()  # organizations with woken webhooks, in turn
        self._held = collections.Counter()  # organization: slots it holds
        self._busy = {}  # key: its organization, for those delivering
        self._again = set()  # busy ones woken meanwhile
        self._retries = []  # heap of (monotonic time, key, organization)
        self._retrying = {}  # key: the time of its entry there (older entries are void)
        # key: (filter, slot) up to which the webhook has nothing it may see
        # with that filter, as far as this process knows
        self._clear = {}
        self._tail = self._tail_start = None  # the feed followed: up to, and since
        self._newest = {}  # organization: the slot of its newest event followed
        self.started = collections.Counter()  # organization: deliveries started (for the tests)
        self.passes = 0  # of the loop (for the tests)
        # a commit it may care about, or a delivery ended: look again at once
        self._woken = threading.Event()
        # the organizations with webhooks (as last seen), and whether an
        # unscoped admin has one: only their commits wake the loop
        self._watched, self._watch_all = set(), False
        self._added = set()  # organizations watched since the sweep began (None: unscoped)
        self._stopping = threading.Event()
        self._bodies = {}  # event id -> its body, the same for every webhook (a few kept)
        self._tls = ssl.create_default_context()
        self._events = EventSchema()
        self._base_url = service_url(app.config["ALLOWED_HOSTS"], app.config["PORT"])
        self.store.webhooks.listeners.append(self._noticed)

    # -- the loop ---------------------------------------------------------------

    def start(self):
        self.store.events.listeners.append(self._on_commit)
        threading.Thread(target=self._run, name="webhook-deliverer", daemon=True).start()

    def _on_commit(self, organization):
        """A commit in this process (or, ALL, seen from another's): wake the
        loop if a webhook may see it. Other tenants' commits cost this."""
        if organization is ALL or self._watch_all or organization in self._watched:
            self._woken.set()

    def watch(self, record):
        """Commits of the webhook's organization (every commit, for an
        unscoped admin's) wake the loop from now on."""
        org = record.get("organization")
        self._added.add(org)
        if org is None:
            self._watch_all = True
        else:
            self._watched.add(org)

    def stop(self):
        """End the loop (deliveries under way finish)."""
        self._stopping.set()
        self._woken.set()
        if self._on_commit in self.store.events.listeners:
            self.store.events.listeners.remove(self._on_commit)

    @property
    def followed(self):
        """The slot up to which the loop has followed the feed."""
        return self._tail or ""

    @property
    def delivering(self):
        """Whether webhooks are being delivered, or wait for a slot."""
        return bool(self._busy or self._queues)

    def _run(self):
        next_sweep = 0.0
        while not self._stopping.is_set():
            passed = False
            # the database may be away: said once per outage, tried again later
            with background("A webhook delivery pass"):
                if not self.store.webhooks.collection.estimated_document_count():
                    time.sleep(POLL_SECONDS)  # no webhook at all: a commit costs nothing here
                    continue
                # before the pass: a commit during it wakes the next
                head = self.store.events.seen_head
                self.passes += 1
                self.follow()
                if time.monotonic() >= next_sweep:
                    self.sweep()
                    next_sweep = time.monotonic() + SWEEP_SECONDS
                self._wake_retries()
                self._schedule()
                passed = True
            if not passed:
                time.sleep(POLL_SECONDS)
                continue
            # woken by this process's commits that a webhook may see and by
            # deliveries that end (their webhook may have more by now), else
            # within POLL_SECONDS (retries falling due, other processes'
            # commits: on a shared database, by the feed's poller too)
            if self.store.events.shared:
                deadline = time.monotonic() + POLL_SECONDS
                while not self._woken.is_set() and (left := deadline - time.monotonic()) > 0:
                    if self.store.events.wait(head, min(left, 0.1)):
                        break
            else:
                self._woken.wait(POLL_SECONDS)
            self._woken.clear()

    def step(self):
        """Follow the feed, wake the retries falling due, and start what the
        free slots allow; the threads started."""
        self.follow()
        self._wake_retries()
        return self._schedule()

    def _wake_retries(self):
        now = time.monotonic()
        due = []
        with self._lock:
            while self._retries and self._retries[0][0] <= now:
                when, key, org = heapq.heappop(self._retries)
                if self._retrying.get(key) == when:
                    del self._retrying[key]
                    due.append((key, org))
        for key, org in due:
            self._wake(key, org)

    def run_once(self):
        """Look at every webhook now, and start what the slots allow; the
        threads started (tests join them)."""
        self.follow()
        self.sweep()
        return self.step()

    def _begin(self):
        """Start following the feed from the oldest position of an active
        webhook (or the head): organizations without events since a
        webhook's position then have nothing for it, whatever its filter."""
        if self._tail is None:
            self.store.webhooks.backfill()
            head = self.store.events.head()
            oldest = min((doc["_position"] or "" for doc in self.store.webhooks.scheduled(
                _pause)), default=head)
            self._tail = self._tail_start = min(oldest, head)

    def follow(self):
        """Read the feed's new slots, and wake the webhooks that may see
        their events: their organizations' and the unscoped admins'."""
        self._begin()
        while True:
            end, newest, more = self.store.events.organizations_after(self._tail)
            if end == self._tail:
                return
            if newest:
                for doc in self.store.webhooks.seeing(list(newest)):
                    self.watch(doc)
                    # none of its organization's events in (known, tail] (before this run)
                    self._note_clear(doc, self._known(doc))
                    self._wake_if_due(doc)
            with self._lock:  # with the tail: a reader sees both or neither
                for org, slot in newest.items():
                    if org is not None:
                        self._newest[org] = slot
                self._tail = end
            if not more:
                return

    def _known(self, doc):
        """How far the webhook (as `doc` was read) is known to have nothing
        it may see: its position, what this process read past since, and,
        for an organization's webhook, the feed followed when that
        organization has had no event since."""
        position = doc["_position"] or ""
        org = doc.get("organization")
        with self._lock:
            filter_, clear = self._clear.get(doc["_id"], (None, ""))
            known = max(position, clear) if filter_ == doc.get("filter") else position
            if org is not None and self._tail_start is not None \
                    and known >= self._tail_start and self._newest.get(org, "") <= known:
                known = max(known, self._tail)
        return known

    def _note_clear(self, doc, slot):
        """Nothing for the webhook, with the filter `doc` has, up to `slot`."""
        with self._lock:
            filter_, clear = self._clear.get(doc["_id"], (None, ""))
            if filter_ != doc.get("filter") or clear < slot:
                self._clear[doc["_id"]] = (doc.get("filter"), slot)

    def _wake_if_due(self, doc):
        """Wake the webhook, or, while it waits out a backoff or another
        process's lease, once that ends."""
        now, org = _stored_now(), doc.get("organization")
        if doc["_next_attempt_at"] > now:
            self._retry_at(doc["_id"], org, doc["_next_attempt_at"])
        elif doc["_lease_until"] > now and doc.get("_lease_owner") != self.owner:
            self._retry_at(doc["_id"], org, doc["_lease_until"])
        else:
            self._wake(doc["_id"], org)

    def sweep(self):
        """Every active webhook: wake those this process cannot tell are
        caught up (made active again, left by a process that died, retries
        another process set), forget the gone, and write the positions
        ADVANCE_BATCH slots behind what is known (in batches: rarely)."""
        self._begin()
        seen, watched, watch_all = set(), set(), False
        self._added = set()
        for doc in self.store.webhooks.scheduled(_pause):
            key = doc["_id"]
            seen.add(key)
            if doc.get("organization") is None:
                watch_all = True
            else:
                watched.add(doc["organization"])
            known = self._known(doc)
            if known < self._tail:
                self._wake_if_due(doc)
            elif _distance(doc["_position"], known) >= ADVANCE_BATCH and key not in self._busy:
                self.store.webhooks.pass_unseen(key, doc["_position"], known, doc.get("filter"))
        with self._lock:
            for key in set(self._clear) - seen:
                del self._clear[key]
        # as found, and what was made meanwhile
        self._watched = watched | (self._added - {None})
        self._watch_all = watch_all or None in self._added

    def _noticed(self, record, resumed):
        """A webhook was made, or made active again, here: its organization's
        commits wake the loop from now on, and one resumed is looked at now
        (other processes' sweeps find it within SWEEP_SECONDS)."""
        self.watch(record)
        if resumed and self._tail is not None:
            self._wake(record["id"], record.get("organization"))
            self._woken.set()  # the loop starts it

    # -- fair turns ---------------------------------------------------------------

    def _wake(self, key, org):
        """Queue the webhook for a delivery (at the back of its organization's
        queue); one delivering is woken again when it ends."""
        with self._lock:
            if key in self._busy:
                self._again.add(key)
                return
            queue = self._queues.get(org)
            if queue is None:
                queue = self._queues[org] = {}
                self._turns.append(org)
            queue.setdefault(key)

    def _may_take(self, org, free):
        held = self._held[org]
        return held < self.share and (held == 0 or free > self.kept_free)

    def _schedule(self):
        """Give the free slots to the woken webhooks, one organization after
        another in turn, each at most its share; the threads started."""
        started = []
        with self._lock:
            passed = 0  # organizations passed over in a row: each may not take one now
            while self._turns and passed < len(self._turns):
                free = self.slots - len(self._busy)
                if free <= 0:
                    break
                org = self._turns[0]
                self._turns.rotate(-1)  # its next turn comes after every other's
                if not self._may_take(org, free):
                    passed += 1
                    continue
                passed = 0
                queue = self._queues[org]
                key = next(iter(queue))
                del queue[key]
                if not queue:
                    del self._queues[org]
                    self._turns.remove(org)
                self._held[org] += 1
                self._busy[key] = org
                self.started[org] += 1
                started.append((key, org))
        threads = []
        for key, org in started:
            thread = threading.Thread(target=self._deliver_in_slot, args=(key, org),
                                      name=f"webhook-{key}", daemon=True)
            thread.start()
            threads.append(thread)
        return threads

    def _deliver_in_slot(self, key, org):
        try:
            self.deliver(key)
        except Exception:
            log.exception("delivery of webhook %s failed", key)
            self.store.webhooks.release(key, self.owner)
        finally:
            with self._lock:
                del self._busy[key]
                self._held[org] -= 1
                if not self._held[org]:
                    del self._held[org]
                again = key in self._again
                self._again.discard(key)
            if again:
                self._wake(key, org)
            self._schedule()  # the freed slot, to whoever's turn it is, now
            self._woken.set()

    def _retry_at(self, key, org, when):
        """Wake the webhook at `when` (a stored time)."""
        self._retry_in(key, org, (when - _stored_now()).total_seconds())

    def _retry_in(self, key, org, seconds):
        """Wake the webhook in `seconds` (at its sooner time if it has one)."""
        at = time.monotonic() + max(0.0, seconds)
        with self._lock:
            if self._retrying.get(key, at + 1) > at:
                self._retrying[key] = at
                heapq.heappush(self._retries, (at, key, org))

    # -- one webhook ----------------------------------------------------------

    def deliver(self, key):
        """Deliver the webhook's pending events in feed order, under its
        lease, until it is caught up, one fails, or the lease is lost. The
        feed is read first, without the lease: a webhook with nothing to
        deliver writes nothing."""
        webhooks = self.store.webhooks
        doc = webhooks.to_deliver(key)
        if doc is None:
            return
        now = _stored_now()
        if doc["_next_attempt_at"] > now:  # waiting out a backoff (perhaps another process's)
            return self._retry_at(key, doc.get("organization"), doc["_next_attempt_at"])
        if doc["_lease_until"] > now and doc["_lease_owner"] != self.owner:
            # another process delivers it; if it dies, take over when its lease ends
            return self._retry_at(key, doc.get("organization"), doc["_lease_until"])
        tree = filtering.parse(doc["filter"]) if doc.get("filter") else None
        position, leased = self._known(doc), False
        try:
            while True:
                page = self.store.events.page(PageRequest(
                    PAGE, tree, position or None, doc.get("organization")))
                if page.records and not leased:
                    claimed = webhooks.claim(key, self.owner)
                    if claimed is None:  # another took it first: again if its lease ends
                        return self._retry_at(key, doc.get("organization"),
                                              _stored_now() + webhooks.lease)
                    doc = claimed
                    leased = True
                    tree = filtering.parse(doc["filter"]) if doc.get("filter") else None
                    position = self._known(doc)  # as stored now: read again from there
                    continue
                for event in page.records:
                    if not self._post_one(doc, event):
                        return  # failed (lease released) or lost
                    doc.update(_position=event["id"][4:], _attempt=0, _failing_since=None)
                    position = doc["_position"]
                reached = page.next_after or page.end
                if reached and reached > position:  # passed events it does not see
                    position = reached
                if page.next_after is None:
                    break
            self._note_clear(doc, position)
            if not leased and _distance(doc["_position"], position) >= ADVANCE_BATCH:
                webhooks.pass_unseen(key, doc["_position"], position, doc.get("filter"))
        finally:
            if leased:
                webhooks.release(key, self.owner, position, doc.get("filter"))

    def _post_one(self, doc, event):
        """POST one event; whether it was acknowledged (and recorded so).
        Nothing is sent once the webhook or its organization is being
        deleted, or the lease is lost."""
        webhooks = self.store.webhooks
        if not webhooks.still_delivering(doc["_id"], self.owner, doc.get("organization")):
            return False
        started = time.monotonic()
        status, error = self.post(doc["url"], doc["_secret"], event)
        duration = round((time.monotonic() - started) * 1000)
        webhooks.log(doc["_id"], event["id"], doc.get("_attempt", 0) + 1, status, error, duration)
        if status is not None and 200 <= status < 300:
            return webhooks.advance(doc["_id"], self.owner, event["id"][4:], delivered=True)
        webhooks.failed(doc, self.owner, error or f"the receiver answered {status}")
        self._retry_in(doc["_id"], doc.get("organization"),
                       WEBHOOK_BACKOFF[min(doc.get("_attempt", 0), len(WEBHOOK_BACKOFF) - 1)])
        return False

    def body(self, event):
        """The event as `GET /events/{id}` shows it (made once for all webhooks)."""
        body = self._bodies.get(event["id"])
        if body is None:
            with self.app.test_request_context("/", base_url=self._base_url):
                body = orjson.dumps(self._events.dump(event))
            if len(self._bodies) >= 1024:
                self._bodies.clear()
            self._bodies[event["id"]] = body
        return body

    def post(self, url, secret, event):
        """(status code or None, error or None) of one signed POST to `url`:
        the address checked again, no redirect followed, the whole exchange
        within the timeout."""
        body = self.body(event)
        try:
            target = outbound.parse(url, self.allowed)
            address = outbound.addresses(target, self.allowed)[0]
        except outbound.TargetRefused as refused:
            return None, f"refused: {refused}"
        now = datetime.now(timezone.utc)
        headers = {"Content-Type": "application/json", "User-Agent": "cluster-inventory-webhooks",
                   "webhook-id": event["id"], "webhook-timestamp": str(int(now.timestamp())),
                   "webhook-signature": Signer(secret).sign(event["id"], now, body.decode())}
        kind = _HTTPS if target.scheme == "https" else _HTTP
        kwargs = {"context": self._tls} if kind is _HTTPS else {}
        connection = kind(target, address, self.timeout, **kwargs)
        deadline = threading.Timer(self.timeout, _cut, (connection,))  # a slow drip ends too
        deadline.start()
        try:
            connection.request("POST", target.path, body=body, headers=headers)
            answer = connection.getresponse()
            answer.read(WEBHOOK_RESPONSE_BYTES)
            return answer.status, None
        except (OSError, http.client.HTTPException) as failure:
            timed_out = not deadline.is_alive() or isinstance(failure, TimeoutError)
            return None, (f"no answer within {self.timeout:g} s" if timed_out
                          else f"{type(failure).__name__}: {failure}")
        finally:
            deadline.cancel()
            connection.close()


def _stored_now():
    """Now as the store keeps times: naive UTC."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _pause():
    """Between two slices of a long read: others run first."""
    time.sleep(0.001)


def _cut(connection):
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def init_app(app, config):
    """Deliver webhooks from this process when it serves (and WEBHOOK_DELIVERY is on)."""
    deliverer = Deliverer(app)
    app.extensions["inventory.webhooks"] = deliverer
    if config.ANNOUNCE and config.WEBHOOK_DELIVERY:
        deliverer.start()
    return deliverer
