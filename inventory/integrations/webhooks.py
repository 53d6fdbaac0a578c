"""The webhooks' deliverer: in each serving process, a loop that finds the
webhooks with events to deliver, takes each one's lease in the store (one
deliverer per webhook across workers and instances) and POSTs its events in
feed order, signed as Standard Webhooks says, each until a 2xx within
WEBHOOK_TIMEOUT acknowledges it (at least once: a crash between the answer
and the store's write repeats that event). A failure waits out a backoff
(inventory/core/caps.py); 24 h of them make the webhook inactive. Each
delivery runs in its own thread (a greenlet under the gevent worker), at
most WEBHOOK_DELIVERIES_PER_WORKER at once and PER_ORGANIZATION of one
organization's, so a slow or black-holed receiver costs its own slot only."""
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
from inventory.core.caps import (
    WEBHOOK_DELIVERIES_PER_ORGANIZATION,
    WEBHOOK_DELIVERIES_PER_WORKER,
    WEBHOOK_RESPONSE_BYTES,
    WEBHOOK_TIMEOUT,
)
from inventory.store.pages import PageRequest
from schemas.events import EventSchema

log = logging.getLogger("inventory.webhooks")
POLL_SECONDS = 1.0  # how often the loop looks for webhooks with events to deliver
PAGE = 20  # events read from the feed at a time, per webhook


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


class Deliverer:
    def __init__(self, app):
        self.app = app
        self.store = app.extensions["inventory.store"]
        self.allowed = tuple(app.config["WEBHOOK_ALLOWED_HOSTS"])
        self.timeout = WEBHOOK_TIMEOUT
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(4)}"
        self.slots = threading.BoundedSemaphore(WEBHOOK_DELIVERIES_PER_WORKER)
        self._per_org, self._busy, self._lock = {}, set(), threading.Lock()
        self._ended = threading.Event()  # a delivery ended: look again at once
        self._bodies = {}  # event id -> its body, the same for every webhook (a few kept)
        self._tls = ssl.create_default_context()
        self._events = EventSchema()
        public = [host for host in app.config["ALLOWED_HOSTS"]
                  if host != "*" and not host.startswith(".")]
        host = public[0] if public else "localhost"
        self._base_url = f"{'http' if host in LOOPBACK_HOSTS else 'https'}://{host}/"

    # -- the loop ---------------------------------------------------------------

    def start(self):
        threading.Thread(target=self._run, name="webhook-deliverer", daemon=True).start()

    def _run(self):
        while True:
            try:
                if not self.store.webhooks.collection.estimated_document_count():
                    time.sleep(POLL_SECONDS)  # no webhook at all: a commit costs nothing here
                    continue
                head = self.store.events.head()  # before the pass: a commit during it wakes the next
                self.run_once(head)
            except Exception:  # the database may be away: try again later
                log.exception("webhook delivery pass failed")
                time.sleep(POLL_SECONDS)
                continue
            # woken by this process's commits and by deliveries that end (their
            # webhook may have more by now), else within POLL_SECONDS (other
            # processes' commits, retries falling due)
            deadline = time.monotonic() + POLL_SECONDS
            while not self._ended.is_set() and (left := deadline - time.monotonic()) > 0:
                if self.store.events.wait(head, min(left, 0.1)):
                    break
            self._ended.clear()

    def run_once(self, head=None):
        """Start a delivery for each webhook that has events due and a free
        slot; the threads started (tests join them)."""
        head = self.store.events.head() if head is None else head
        started = []
        for doc in self.store.webhooks.due(head):
            org_slots = self._org_slots(doc.get("organization"))
            with self._lock:
                if doc["_id"] in self._busy:
                    continue
                if not self.slots.acquire(blocking=False):
                    break
                if not org_slots.acquire(blocking=False):
                    self.slots.release()
                    continue
                self._busy.add(doc["_id"])
            thread = threading.Thread(target=self._deliver_in_slot, args=(doc["_id"], org_slots),
                                      name=f"webhook-{doc['_id']}", daemon=True)
            thread.start()
            started.append(thread)
        return started

    def _org_slots(self, org):
        with self._lock:
            return self._per_org.setdefault(
                org, threading.BoundedSemaphore(WEBHOOK_DELIVERIES_PER_ORGANIZATION))

    def _deliver_in_slot(self, key, org_slots):
        try:
            self.deliver(key)
        except Exception:
            log.exception("delivery of webhook %s failed", key)
            self.store.webhooks.release(key, self.owner)
        finally:
            with self._lock:
                self._busy.discard(key)
            org_slots.release()
            self.slots.release()
            self._ended.set()

    # -- one webhook ----------------------------------------------------------

    def deliver(self, key):
        """Deliver the webhook's pending events in feed order, under its
        lease, until it is caught up, one fails, or the lease is lost."""
        webhooks = self.store.webhooks
        doc = webhooks.claim(key, self.owner)
        if doc is None:
            return
        try:
            tree = filtering.parse(doc["filter"]) if doc.get("filter") else None
            while True:
                page = self.store.events.page(PageRequest(
                    PAGE, tree, doc["_position"] or None, doc.get("organization")))
                for event in page.records:
                    if not self._post_one(doc, event):
                        return  # failed (lease released) or lost
                    doc.update(_position=event["id"][4:], _attempt=0, _failing_since=None)
                reached = page.next_after or page.end
                if reached and reached > doc["_position"]:  # passed events it does not see
                    if not webhooks.advance(key, self.owner, reached):
                        return
                    doc["_position"] = reached
                if page.next_after is None:
                    break
        finally:
            webhooks.release(key, self.owner)

    def _post_one(self, doc, event):
        """POST one event; whether it was acknowledged (and recorded so)."""
        started = time.monotonic()
        status, error = self.post(doc["url"], doc["_secret"], event)
        duration = round((time.monotonic() - started) * 1000)
        webhooks = self.store.webhooks
        webhooks.log(doc["_id"], event["id"], doc.get("_attempt", 0) + 1, status, error, duration)
        if status is not None and 200 <= status < 300:
            return webhooks.advance(doc["_id"], self.owner, event["id"][4:], delivered=True)
        webhooks.failed(doc, self.owner, error or f"the receiver answered {status}")
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
