"""The agent's one POST of its scan (inventory/agent/posting.py), over an
inventory that urllib3's pool stands in for (no socket): the URL of a
cluster's scans; one key per run, shared by its retries; the request's
token, key and compact JSON; 5xx, 429 and 409 retried with the same key
and body after Retry-After (seconds or a date, capped at MAX_WAIT) or the
backoff; anything else final, as one line with the inventory's detail and
locations, filtered (no token it echoes); a lost answer asked again, a
certificate refused at once; an answer read no further than
MAX_ANSWER_BYTES. The agent run whole against a loopback inventory:
tests/unit/agent/test_cli.py."""
import email.utils
import json
import time

import pytest
import urllib3

from inventory.agent import NAME, VERSION
from inventory.agent.failures import InventoryError
from inventory.agent.posting import MAX_ANSWER_BYTES, MAX_WAIT, new_key, post_scan, scans_url

BASE, TOKEN, KEY = "https://inventory.example.com/", "tok-secret-123456", "inventory-agent-k1"
SCAN = {"scanned_on": 1700000000, "nodes": {"count": 3}}


class Answer:
    """An answer as urllib3 hands it unread: read in chunks, counted."""

    def __init__(self, status, body=b"", headers=None, reason=""):
        self.status, self.headers, self.reason = status, headers or {}, reason
        self.body = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.read_bytes = 0

    def read1(self, limit):
        chunk = self.body[self.read_bytes:self.read_bytes + limit]
        self.read_bytes += len(chunk)
        return chunk

    def close(self):
        pass


class Inventory:
    """urllib3's pool, answering each request as told (an Answer, or an
    exception raised): records what is sent."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.requests = []

    def __call__(self, retries):
        assert retries is False  # the agent retries itself, with the same key
        return self

    def request(self, method, url, **options):
        self.requests.append((method, url, options))
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    def clear(self):
        pass


@pytest.fixture
def inventory(monkeypatch):
    inventory = Inventory()
    monkeypatch.setattr(urllib3, "PoolManager", inventory)
    return inventory


def _post(**options):
    return post_scan(BASE, "prod/eu 1", TOKEN, SCAN, KEY, **options)


def test_the_url_of_a_clusters_scans():
    assert scans_url("https://inv.example.com/api/", "prod/eu 1") == \
        "https://inv.example.com/api/kubeclusters/prod%2Feu%201/scans"
    assert scans_url("https://inv.example.com", "c1") == "https://inv.example.com/kubeclusters/c1/scans"


def test_each_run_has_a_key_of_its_own():
    first, second = new_key(), new_key()
    assert first.startswith(f"{NAME}-") and second.startswith(f"{NAME}-") and first != second


def test_one_post_with_the_token_the_key_and_the_scan_as_compact_json(inventory, pauses):
    inventory.answers = [Answer(201, {"id": "k8scs_1", "scanned_on": 1700000000})]
    assert _post() == {"id": "k8scs_1", "scanned_on": 1700000000}
    ((method, url, options),) = inventory.requests
    assert (method, url) == ("POST", BASE + "kubeclusters/prod%2Feu%201/scans")
    assert options["headers"] == {"Authorization": f"Bearer {TOKEN}",
                                  "Content-Type": "application/json",
                                  "Accept": "application/json", "Idempotency-Key": KEY,
                                  "User-Agent": f"{NAME}/{VERSION}"}
    assert options["body"] == b'{"scanned_on":1700000000,"nodes":{"count":3}}'
    assert options["redirect"] is False and pauses == []


def test_what_says_try_again_is_retried_with_the_same_key_and_body(inventory, pauses):
    soon = email.utils.formatdate(time.time() + 3600, usegmt=True)  # a date, capped
    inventory.answers = [Answer(503), Answer(429, headers={"Retry-After": "2"}),
                         Answer(409, headers={"Retry-After": soon}),
                         Answer(201, {"id": "k8scs_1"})]
    assert _post() == {"id": "k8scs_1"}
    assert pauses == [1.0, 2.0, MAX_WAIT]  # the backoff, then what Retry-After says
    assert len({(o["headers"]["Idempotency-Key"], o["body"])
                for _, _, o in inventory.requests}) == 1


def test_a_retry_after_past_the_most_it_waits_or_not_a_time_is_capped_or_the_backoff(
        inventory, pauses):
    inventory.answers = [Answer(503, headers={"Retry-After": "600"}),
                         Answer(503, headers={"Retry-After": "soon"}),
                         Answer(503, headers={"Retry-After": "Mon, 01 Jan 2001 00:00:00 GMT"}),
                         Answer(201, {"id": "k8scs_1"})]
    _post()
    assert pauses == [MAX_WAIT, 2.0, 0.0]


def test_a_refusal_is_final_one_line_with_the_detail_and_locations_filtered(inventory,
                                                                             pauses):
    inventory.answers = [Answer(422, {"detail": f"bad scan from {TOKEN}", "errors": [
        {"location": "body.nodes.count", "message": "Must be at least 0."}, "junk"]},
        reason="Unprocessable Entity")]
    with pytest.raises(InventoryError) as refused:
        _post()
    text = str(refused.value)
    assert text == (f"{BASE}kubeclusters/prod%2Feu%201/scans refused the scan: 422 "
                    "Unprocessable Entity: bad scan from [redacted] "
                    "(body.nodes.count: Must be at least 0.)")
    assert len(inventory.requests) == 1 and pauses == []


def test_a_refused_token_and_a_redirect_say_what_to_do(inventory, pauses):
    inventory.answers = [Answer(401, {"detail": "No valid token."}, reason="Unauthorized")]
    with pytest.raises(InventoryError, match=r"\(is INVENTORY_TOKEN a live token\?\)"):
        _post()
    inventory.answers = [Answer(308, headers={"Location": "https://u:pw@new.example.com/x"})]
    with pytest.raises(InventoryError) as refused:
        _post()
    assert "redirects to https://new.example.com/x: use that URL" in str(refused.value)
    assert "pw" not in str(refused.value) and len(inventory.requests) == 2 and pauses == []


def test_what_keeps_failing_is_final_after_the_last_try_saying_how_many(inventory, pauses):
    inventory.answers = [Answer(500)] * 3 + [Answer(502, reason="Bad Gateway")]
    with pytest.raises(InventoryError, match=r"502 Bad Gateway \(after 4 tries\)$"):
        _post()
    assert pauses == [1.0, 2.0, 4.0]


def test_a_lost_answer_is_asked_again_and_a_certificate_refused_at_once(inventory, pauses):
    lost = urllib3.exceptions.ProtocolError("Connection aborted.")
    inventory.answers = [lost, lost, Answer(201, {"id": "k8scs_1"})]
    assert _post() == {"id": "k8scs_1"} and pauses == [1.0, 2.0]
    inventory.answers = [urllib3.exceptions.SSLError("certificate verify failed")]
    with pytest.raises(InventoryError, match="could not be reached: certificate verify failed"):
        _post()
    assert pauses == [1.0, 2.0]
    inventory.answers = [lost] * 2
    with pytest.raises(InventoryError, match=r"could not be reached \(2 tries\)"):
        _post(attempts=2)


def test_an_answer_that_is_no_json_object_is_a_failure(inventory):
    inventory.answers = [Answer(201, b"[1, 2]")]
    with pytest.raises(InventoryError, match="201 with a body that is not a JSON object"):
        _post()


def test_an_answer_is_read_no_further_than_its_bound(inventory):
    endless = Answer(201, b"{" + b" " * (4 * MAX_ANSWER_BYTES))
    inventory.answers = [endless]
    with pytest.raises(InventoryError, match="not a JSON object"):
        _post()
    assert MAX_ANSWER_BYTES < endless.read_bytes <= MAX_ANSWER_BYTES + (1 << 16)
