"""The one POST of the scan to the inventory, `POST {INVENTORY_URL}/kubeclusters/
{cluster}/scans`, with a bearer token and an `Idempotency-Key`.

A POST whose answer was lost (the connection broke, the read timed out) may
still have been recorded; it is sent again with the same key, which the
inventory answers with the first answer instead of a second scan
(docs/reliability.md, "Idempotent creates"). So are the answers that say "try again":
5xx, 429 and 409 (a request with the same key is still running), after
`Retry-After` when the inventory says it, waited at most `MAX_WAIT`
seconds. Anything else is final: the inventory's problem detail, in one
line.
"""
import email.utils
import json
import time
import uuid
from urllib.parse import quote

import urllib3

from inventory.agent import NAME, VERSION
from inventory.agent.failures import InventoryError

ATTEMPTS = 4  # the first and three retries, 1, 2 and 4 s apart unless Retry-After says
MAX_WAIT = 10.0  # a longer Retry-After is waited this long: the CronJob runs again anyway
RETRIED_STATUSES = frozenset({409, 429})  # and any 5xx


def new_key():
    """An Idempotency-Key for one run: the run's retries share it."""
    return f"{NAME}-{uuid.uuid4()}"


def scans_url(base_url, cluster):
    return f"{base_url.rstrip('/')}/kubeclusters/{quote(cluster, safe='')}/scans"


def _pause(seconds):
    time.sleep(seconds)


def post_scan(base_url, cluster, token, body, key, timeout=30.0, attempts=ATTEMPTS):
    """POST the scan; the inventory's answer (the recorded scan) as JSON."""
    url = scans_url(base_url, cluster)
    data = json.dumps(body, separators=(",", ":")).encode()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json",
               "Accept": "application/json", "Idempotency-Key": key,
               "User-Agent": f"{NAME}/{VERSION}"}
    pool = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(connect=timeout, read=timeout))
    try:
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                answer = pool.request("POST", url, body=data, headers=headers, redirect=False)
            except urllib3.exceptions.SSLError as error:  # a certificate does not fix itself
                raise InventoryError(f"{url} could not be reached: {_one_line(error)}") from None
            except urllib3.exceptions.HTTPError as error:
                if last:
                    raise InventoryError(f"{url} could not be reached ({attempts} tries): "
                                         f"{_one_line(error)}") from None
                _pause(_backoff(attempt))
                continue
            if 200 <= answer.status <= 299:
                return _answer_json(answer, url)
            if last or not (answer.status >= 500 or answer.status in RETRIED_STATUSES):
                raise InventoryError(_refusal(answer, url, attempt))
            _pause(_retry_after(answer.headers.get("Retry-After"), attempt))
    finally:
        pool.clear()
    raise AssertionError("unreachable")


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


def _answer_json(answer, url):
    try:
        recorded = json.loads(answer.data)
    except ValueError:
        recorded = None
    if not isinstance(recorded, dict):
        raise InventoryError(f"{url} answered {answer.status} with a body that is not a JSON object")
    return recorded


def _refusal(answer, url, attempt):
    """`POST url: 422 Unprocessable Entity: <detail> (body.nodes.count: <message>)`."""
    text = f"{url} refused the scan: {answer.status} {answer.reason or ''}".rstrip()
    try:
        problem = json.loads(answer.data)
    except ValueError:
        problem = None
    if isinstance(problem, dict):
        if problem.get("detail"):
            text += f": {problem['detail']}"
        errors = [e for e in problem.get("errors") or [] if isinstance(e, dict)]
        if errors:
            text += " (" + "; ".join(f"{e.get('location', '?')}: {e.get('message', '')}"
                                      for e in errors[:3]) + ")"
    if answer.status == 401:
        text += " (is INVENTORY_TOKEN a live token?)"
    if 300 <= answer.status <= 399 and answer.headers.get("Location"):
        text += f" (INVENTORY_URL redirects to {answer.headers['Location']}: use that URL)"
    if attempt > 1:
        text += f" (after {attempt} tries)"
    return _one_line(text)


def _one_line(text):
    return " ".join(str(text).split())
