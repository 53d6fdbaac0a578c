"""The error body as plain data (inventory/http/problems.py): RFC 9457's
members, and its entries bounded in number and size."""
from inventory.core.caps import MAX_ENTRIES, MAX_VALUE_BYTES
from inventory.http.problems import bounded_entries, problem_body


def test_the_body_has_the_interfaces_members():
    body = problem_body(404, "No such cluster.", [], "/schemas/Error.json", "urn:uuid:x")
    assert body == {"$schema": "/schemas/Error.json", "status": 404, "title": "Not Found",
                    "detail": "No such cluster.", "type": "about:blank",
                    "instance": "urn:uuid:x", "errors": []}


def test_at_most_the_stated_entries_and_one_that_says_how_many_more():
    entries = [{"location": f"body.labels.k{n}", "message": "bad", "value": n}
               for n in range(MAX_ENTRIES + 3)]
    kept = bounded_entries(entries)
    assert len(kept) == MAX_ENTRIES + 1 and kept[:MAX_ENTRIES] == entries[:MAX_ENTRIES]
    assert kept[-1]["location"] == "body"
    assert "3 more problems" in kept[-1]["message"] and kept[-1]["value"] is None
    assert len(bounded_entries(entries[:MAX_ENTRIES])) == MAX_ENTRIES


def test_a_large_value_is_echoed_as_what_it_was():
    def echoed(value):
        return bounded_entries([{"location": "body.x", "message": "m", "value": value}])[0]["value"]
    long = "a" * (2 * MAX_VALUE_BYTES)
    assert echoed(long).endswith(f"... ({len(long)} characters)")
    assert len(echoed(long).encode()) <= MAX_VALUE_BYTES
    assert echoed({str(n): "v" * 50 for n in range(MAX_VALUE_BYTES)}).startswith("(an object of")
    assert echoed(["v" * 50] * MAX_VALUE_BYTES) == f"(an array of {MAX_VALUE_BYTES} items)"
    assert echoed("small") == "small" and echoed(None) is None
    assert echoed({1, 2}) == "{1, 2}"  # not JSON: its repr, short
