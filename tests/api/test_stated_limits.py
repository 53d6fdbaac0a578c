"""Every limit the README states is the one enforced.

Each case reads the figure from the README's own sentence and checks it
against what the service does: a request at the limit passes the limit's
check, one past it is refused. Limits of the server layer (gunicorn's, for
which a served process is needed, tests/system/test_serving.py) and of work no
request can reach cheaply are checked against the constant the enforcing
code reads, and that constant against gunicorn's configuration."""
import importlib.util
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXT = " ".join((ROOT / "README.md").read_text().split())  # sentences, whatever their line breaks


def stated(pattern):
    """The number the README states where `pattern` (one group) matches."""
    found = re.search(pattern, TEXT)
    assert found, f"the README no longer says {pattern!r}: update this test with it"
    number = found.group(1).replace(",", "")
    return int(number)


def test_page_size(client):
    most = stated(r"`limit` \(0 to ([\d,]+);")
    default = stated(r"`limit` \(0 to [\d,]+; 0 or absent means ([\d,]+)\)")
    for index in range(default + 1):
        client.post("/organizations", json={"title": f"org {index}"})
    assert client.get(f"/organizations?limit={most}").status_code == 200
    assert client.get(f"/organizations?limit={most + 1}").status_code == 422
    assert len(client.get("/organizations").get_json()["results"]) == default


def test_filter_length(client):
    most = stated(r"Filters longer than ([\d,]+) characters")
    at_most = 'title="' + "a" * (most - len('title=""')) + '"'
    assert len(at_most) == most
    assert client.get("/organizations", query_string={"filter": at_most}).status_code == 200
    over = client.get("/organizations", query_string={"filter": at_most + " "})
    assert over.status_code == 422


def test_filter_terms_and_depth(client):
    terms = stated(r"with more than ([\d,]+) comparisons and NOTs")
    depth = stated(r"or nested deeper than ([\d,]+) levels")

    def status(text):
        return client.get("/organizations", query_string={"filter": text}).status_code
    assert status(" OR ".join(['title="a"'] * terms)) == 200
    assert status(" OR ".join(['title="a"'] * (terms + 1))) == 422
    # the top level is the first: a comparison inside `depth - 1` parentheses is at the last
    assert status("(" * (depth - 1) + 'title="a"' + ")" * (depth - 1)) == 200
    assert status("(" * depth + 'title="a"' + ")" * depth) == 422


def test_body_size(client):
    most = stated(r"\| 413 \| a body over ([\d,]+) MiB \|") * 2**20

    def status(size):
        body = json.dumps({"title": "A", "description": ""})
        body = body[:-2] + "x" * (size - len(body)) + '"}'
        assert len(body) == size
        return client.post("/organizations", data=body,
                           content_type="application/json").status_code
    assert status(most) == 422  # read and validated: too long a description, not too large
    assert status(most + 1) == 413


def cluster_body(inventory, **fields):
    return {"name": "c", "platform": inventory.platform()["name"], "environment": "production",
            "version": "1.31.2", **fields}


def test_error_entries_and_echoed_values(client, inventory):
    most = stated(r"At most ([\d,]+) entries are listed")
    value_bytes = stated(r"an echoed `value` over ([\d,]+) KiB is shortened") * 1024
    labels = {f"-bad{index}": "x" for index in range(most + 5)}
    response = client.post("/kubeclusters", json=cluster_body(inventory, labels=labels))
    errors = response.get_json()["errors"]
    assert len(errors) == most + 1  # and one saying how many more
    assert "5 more" in errors[-1]["message"]
    long = client.post("/organizations", json={"title": "A" * (4 * value_bytes)}).get_json()
    (entry,) = long["errors"]
    assert len(entry["value"].encode()) <= value_bytes < 4 * value_bytes


def test_labels_per_record(client, inventory):
    most = stated(r"at most ([\d,]+) labels")
    labels = {f"k{index}": "v" for index in range(most)}
    body = cluster_body(inventory, labels=labels)
    assert client.post("/kubeclusters", json=body).status_code == 201
    labels["one-more"] = "v"
    body = dict(body, name="d", labels=labels)
    assert client.post("/kubeclusters", json=body).status_code == 422


def test_idempotency_key_length(client):
    most = stated(r"`Idempotency-Key` \(1-([\d,]+) visible ASCII characters")

    def status(key):
        return client.post("/organizations", json={"title": key[:20]},
                           headers={"Idempotency-Key": key}).status_code
    assert status("k" * most) == 201
    assert status("k" * (most + 1)) == 422


def test_server_layer_limits_are_the_constants_gunicorn_is_given():
    from inventory.core import caps as limits

    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "gunicorn.conf.py")
    gunicorn_conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gunicorn_conf)

    assert stated(r"\| 414 \| a request line over ([\d,]+) KiB") * 1024 == limits.REQUEST_LINE_BYTES
    assert stated(r"\| 431 \| a header field over ([\d,]+) bytes") \
        == limits.REQUEST_HEADER_FIELD_BYTES
    assert stated(r"\| 431 \| a header field over [\d,]+ bytes, or more than ([\d,]+) of them") \
        == limits.REQUEST_HEADER_FIELDS
    assert (gunicorn_conf.limit_request_line, gunicorn_conf.limit_request_field_size,
            gunicorn_conf.limit_request_fields) == (
        limits.REQUEST_LINE_BYTES, limits.REQUEST_HEADER_FIELD_BYTES, limits.REQUEST_HEADER_FIELDS)
    assert stated(r"A worker serves at most ([\d,]+) streams at once") == limits.MAX_STREAMS


@pytest.mark.parametrize("pattern, constant", [
    (r"A page examines at most ([\d,]+) records", "inventory.store.pages.MAX_EXAMINED"),
    (r"At most ([\d,]+) groups are answered", "inventory.resources.clusters.store.MAX_GROUPS"),
    (r"at most [\d,]+ labels, at most ([\d,]+) KiB\)", "inventory.store.base.MAX_RECORD_BYTES"),
])
def test_work_bounds_are_the_constants_the_store_reads(pattern, constant):
    import importlib

    module, name = constant.rsplit(".", 1)
    value = getattr(importlib.import_module(module), name)
    figure = stated(pattern)
    assert figure * (1024 if "KiB" in pattern else 1) == value
