"""The one POST of the scan to the inventory, `POST {INVENTORY_URL}/kubeclusters/
{cluster}/scans`, with a bearer token and an `Idempotency-Key`.

A POST whose answer was lost (the connection broke, the read timed out) may
still have been recorded; it is sent again with the same key, which the
inventory answers with the first answer instead of a second scan
(docs/reliability.md, "Idempotent creates"). So are the answers that say "try again":
5xx, 429 and 409 (a request with the same key is still running), after
`Retry-After` when the inventory says it, waited at most `MAX_WAIT`
seconds. Anything else is final: the inventory's problem detail, in one
line, filtered as any server's text is (`redaction`: no token it echoes, no
password of the URL), its answer read within MAX_ANSWER_BYTES and the
clock's time (`bounds`).
"""
import email.utils
import json
import time
import uuid
from urllib.parse import quote

import urllib3

from inventory.agent import NAME, VERSION, bounds
from inventory.agent.failures import InventoryError
from inventory.agent.redaction import server_text, without_userinfo

ATTEMPTS = 4  # the first and three retries, 1, 2 and 4 s apart unless Retry-After says
MAX_WAIT = 10.0  # a longer Retry-After is waited this long: the CronJob runs again anyway
RETRIED_STATUSES = frozenset({409, 429})  # and any 5xx
MAX_ANSWER_BYTES = 1 << 20  # of the inventory's answer (a scan, or a problem): a few KiB


def new_key():
    """An Idempotency-Key for one run: the run's retries share it."""
    return f"{NAME}-{uuid.uuid4()}"


def scans_url(base_url, cluster):
    return f"{base_url.rstrip('/')}/kubeclusters/{quote(cluster, safe='')}/scans"


def _pause(seconds):
    time.sleep(seconds)


def post_scan(base_url, cluster, token, body, key, timeout=30.0, attempts=ATTEMPTS, clock=None):
    """POST the scan; the inventory's answer (the recorded scan) as JSON."""
    url = scans_url(base_url, cluster)
    shown = without_userinfo(url)
    secrets = [token]
    clock = clock or bounds.Clock(bounds.DEFAULT_DEADLINE, timeout)
    data = json.dumps(body, separators=(",", ":")).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json", "Idempotency-Key": key,
               "User-Agent": f"{NAME}/{VERSION}"}
    pool = urllib3.PoolManager(retries=False)
    try:
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                with clock.answer():
                    wait = clock.socket_timeout()
                    answer = pool.request("POST", url, body=data, headers=headers, redirect=False,
                                          preload_content=False,
                                          timeout=urllib3.Timeout(connect=wait, read=wait))
                    answer_data = _read(answer, clock)
            except urllib3.exceptions.SSLError as error:  # a certificate does not fix itself
                raise InventoryError(f"{shown} could not be reached: "
                                     f"{server_text(error, secrets)}") from None
            except (urllib3.exceptions.HTTPError, bounds.AnswerTimedOut) as error:
                if last:
                    reason = (f"timed out (no whole answer within {clock.answer_seconds:g} s)"
                              if isinstance(error, bounds.AnswerTimedOut)
                              else server_text(error, secrets))
                    raise InventoryError(f"{shown} could not be reached ({attempts} tries): "
                                         f"{reason}") from None
                _pause(_backoff(attempt))
                continue
            if 200 <= answer.status <= 299:
                return _answer_json(answer, answer_data, shown)
            if last or not (answer.status >= 500 or answer.status in RETRIED_STATUSES):
                raise InventoryError(_refusal(answer, answer_data, shown, attempt, secrets))
            _pause(_retry_after(answer.headers.get("Retry-After"), attempt))
    finally:
        pool.clear()
    raise AssertionError("unreachable")


def _read(answer, clock):
    """The answer's body, at most MAX_ANSWER_BYTES of it (the rest is not read)."""
    data = bytearray()
    try:
        while chunk := answer.read1(1 << 16):
            data += chunk
            if len(data) > MAX_ANSWER_BYTES:
                return bytes(data[:MAX_ANSWER_BYTES])
            clock.check()
    finally:
        answer.close()
    return bytes(data)


def _backoff(attempt):
    return float(2 ** (attempt - 1))


def _retry_after(value, attempt):
    """Retry-After's seconds or date, at most MAX_WAIT; else the backoff."""
    if value:
        value = value.strip()
        if value.isdigit():
            return min(float(value), MAX_WAIT)
        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError, IndexError):
            pass
        else:
            return min(max(when - time.time(), 0.0), MAX_WAIT)
    return min(_backoff(attempt), MAX_WAIT)


def _answer_json(answer, data, url):
    try:
        recorded = json.loads(data)
    except (ValueError, RecursionError):
        recorded = None
    if not isinstance(recorded, dict):
        raise InventoryError(f"{url} answered {answer.status} with a body that is not a JSON object")
    return recorded


def _refusal(answer, data, url, attempt, secrets):
    """`POST url: 422 Unprocessable Entity: <detail> (body.nodes.count: <message>)`,
    each part of the inventory's text filtered (`redaction.server_text`)."""
    def said(text, limit=200):
        return server_text(text, secrets, limit)
    text = f"{url} refused the scan: {answer.status} {said(answer.reason or '', 60)}".rstrip()
    try:
        problem = json.loads(data)
    except (ValueError, RecursionError):
        problem = None
    if isinstance(problem, dict):
        if problem.get("detail"):
            text += f": {said(problem['detail'])}"
        errors = [e for e in problem.get("errors") or [] if isinstance(e, dict)]
        if errors:
            text += " (" + "; ".join(f"{said(e.get('location', '?'), 80)}: "
                                      f"{said(e.get('message', ''), 120)}"
                                      for e in errors[:3]) + ")"
    if answer.status == 401:
        text += " (is INVENTORY_TOKEN a live token?)"
    if 300 <= answer.status <= 399 and answer.headers.get("Location"):
        text += (f" (INVENTORY_URL redirects to "
                 f"{said(without_userinfo(answer.headers['Location']))}: use that URL)")
    if attempt > 1:
        text += f" (after {attempt} tries)"
    return text
