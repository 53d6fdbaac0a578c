"""The inventory, read over its API with one token: the clusters and
platforms that token may see, and the change feed (`GET /events` with
`after` and `wait`). Each read answers or raises a `SourceError` of one
line; a feed position the inventory no longer keeps is `FeedExpired`
(410), which the syncer answers with a full resync."""
import json
import time
from urllib.parse import urlencode, urlsplit

import urllib3

from inventory.clusterprofiles import NAME, VERSION

PAGE = 100  # the inventory's largest page
MAX_WAIT = 30.0  # a Retry-After (429, 503) is waited at most this long
WAIT = 20  # seconds a read of the feed waits for the next event


class SourceError(Exception):
    """The inventory could not be reached, or refused a read."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status  # the inventory's HTTP status, when it answered


class FeedExpired(SourceError):
    """The feed no longer holds the position to resume from (410)."""


class Inventory:
    def __init__(self, url, token, timeout=30.0):
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query \
                or parts.fragment:
            raise ValueError(f"INVENTORY_URL must be the inventory's http(s) base URL, not {url!r}")
        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise ValueError("INVENTORY_TOKEN must be one token of visible ASCII characters")
        self.base = url.rstrip("/")
        self.timeout = timeout
        self.headers = {"Authorization": f"Bearer {token}", "Accept": "application/json",
                        "User-Agent": f"{NAME}/{VERSION}"}
        self.pool = urllib3.PoolManager(retries=False, maxsize=2)

    def close(self):
        self.pool.clear()

    def get(self, path, query=None, read_timeout=None, attempts=3):
        """GET `path` as JSON: retried after a 429 or 5xx (Retry-After
        honoured) and a broken connection; anything else is final."""
        url = f"{self.base}{path}" + (f"?{urlencode(query)}" if query else "")
        timeout = urllib3.Timeout(connect=self.timeout, read=read_timeout or self.timeout)
        for attempt in range(1, attempts + 1):
            last = attempt == attempts
            try:
                answer = self.pool.request("GET", url, headers=self.headers, timeout=timeout,
                                           redirect=False)
            except urllib3.exceptions.HTTPError as error:
                if last:
                    raise SourceError(f"{self.base} could not be reached: {_one_line(error)}") \
                        from None
                time.sleep(2 ** (attempt - 1))
                continue
            if answer.status == 200:
                try:
                    return json.loads(answer.data)
                except ValueError:
                    raise SourceError(f"GET {path}: the answer is not JSON") from None
            if answer.status == 410:
                raise FeedExpired(f"GET {path}: 410: the feed no longer holds that position", 410)
            if last or not (answer.status >= 500 or answer.status == 429):
                raise SourceError(_refusal(path, answer), answer.status)
            time.sleep(_retry_after(answer.headers.get("Retry-After"), attempt))
        raise AssertionError("unreachable")

    def page(self, path, query=None, read_timeout=None, key="name"):
        """GET a list page: `{"results": [...], "pagination": {...}}`, each
        result an object with a text `key`; any other answer (a proxy's,
        another service's) is a `SourceError`, retried, not a crash."""
        page = self.get(path, query, read_timeout=read_timeout)
        results = page.get("results") if isinstance(page, dict) else None
        pagination = page.get("pagination") if isinstance(page, dict) else None
        if not isinstance(results, list) or not all(
                isinstance(item, dict) and isinstance(item.get(key), str) and item[key]
                for item in results) or not isinstance(pagination or {}, dict):
            raise SourceError(f"GET {path}: the answer is not the inventory's list "
                              "(is INVENTORY_URL the inventory's base URL?)")
        return page

    def _walk(self, path, query=None):
        query = {**(query or {}), "limit": PAGE}
        token = ""
        while True:
            page = self.page(path, {**query, "continue": token} if token else query)
            yield from page["results"]
            token = (page.get("pagination") or {}).get("continue") or ""
            if not token:
                return

    def clusters(self):
        """Every cluster the token sees, page by page (an iterator: the
        syncer keeps what it needs of each as it comes)."""
        return self._walk("/kubeclusters")

    def providers(self):
        """Each platform's control-plane provider, by platform name."""
        return {platform["name"]: (platform.get("control_plane") or {}).get("provider")
                for platform in self._walk("/kubeplatforms")}

    def newest_event(self):
        """The id of the newest event the token sees, or None for none: the
        position to follow from once a full list has been read."""
        results = self.page("/events", {"order_by": "id desc", "limit": 1}, key="id")["results"]
        return results[0]["id"] if results else None

    def events_after(self, position, wait=WAIT):
        """The events after `position` (all from the start for None), oldest
        first; waits up to `wait` s for one when there is none yet."""
        query = {"limit": PAGE, "wait": wait}
        if position:
            query["after"] = position
        return self.page("/events", query, read_timeout=self.timeout + wait, key="id")["results"]


def _retry_after(value, attempt):
    if value and value.strip().isdigit():
        return min(float(value.strip()), MAX_WAIT)
    return min(float(2 ** (attempt - 1)), MAX_WAIT)


def _refusal(path, answer):
    text = f"GET {path}: {answer.status}"
    try:
        problem = json.loads(answer.data)
    except ValueError:
        problem = None
    if isinstance(problem, dict) and problem.get("detail"):
        text += f": {problem['detail']}"
    if answer.status == 401:
        text += " (is INVENTORY_TOKEN a live token?)"
    return _one_line(text)


def _one_line(text):
    return " ".join(str(text).split())
