"""Every documented limit is the one enforced.

The docs' limits table (docs/limits.md) is generated from the constants the
code enforces (scripts/docs-tables; tests/system/test_docs_site.py fails
when it is stale); the first test fails when a limit constant is on no page.
Each other case takes the constant and checks it against what the service
does: a request at the limit passes the limit's check, one past it is
refused. Limits of the server layer (gunicorn's, for which a served process
is needed, tests/system/test_serving.py) are checked against gunicorn's
configuration."""
import ast
import importlib.util
import json
import pathlib

from inventory.core import caps, filtering
from inventory.core.labels import MAX_LABELS
from inventory.http import idempotency, problems
from schemas import common

ROOT = pathlib.Path(__file__).resolve().parents[2]
CLIENTS = ("agent", "clusterprofiles")  # inventory/'s clients of the service, beside it


def _docs_limits():
    spec = importlib.util.spec_from_file_location("docs_limits", ROOT / "scripts" / "docs_limits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _limit_constants():
    """`module.NAME` of every limit constant: each `MAX_*` of inventory/ and
    schemas/, and every constant of inventory/core/caps.py. (Not the
    scanning agent's nor the ClusterProfile syncer's: a client's own
    bounds, on its page, docs/agent.md and docs/clusterprofiles.md.)"""
    found = set()
    service = [path for path in (ROOT / "inventory").rglob("*.py")
               if path.relative_to(ROOT / "inventory").parts[0] not in CLIENTS]
    for path in [*service, *(ROOT / "schemas").rglob("*.py")]:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id.isupper() and (
                        target.id.startswith("MAX_") or module == "inventory.core.caps"):
                    found.add(f"{module}.{target.id}")
    return found


def _constants_read(path):
    """`module.NAME` of each `alias.NAME` that the file at `path` reads,
    where `alias` is a module it imports (`from inventory.core import caps`)."""
    tree = ast.parse(path.read_text())
    aliases = {alias.asname or alias.name: f"{node.module}.{alias.name}"
               for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               for alias in node.names}
    return {f"{aliases[node.value.id]}.{node.attr}" for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
            and node.value.id in aliases}


def test_every_limit_constant_is_in_the_limits_table_or_said_why_not():
    """A limit added to the code is on docs/limits.md (a row of
    scripts/docs_limits.py) or in its UNSTATED, with the reason."""
    docs_limits = _docs_limits()
    constants = _limit_constants()
    assert "inventory.http.parser.MAX_JSON_DEPTH" in constants  # the search finds them
    read = _constants_read(ROOT / "scripts" / "docs_limits.py")
    assert not constants - read - set(docs_limits.UNSTATED), \
        "limits on no page: add a row to scripts/docs_limits.py (or to UNSTATED, saying why)"
    assert not set(docs_limits.UNSTATED) - constants, "UNSTATED names constants that are gone"
    assert not set(docs_limits.UNSTATED) & read, "UNSTATED names constants the table states"


def test_page_size(client):
    most, default = common.MAX_LIMIT, common.DEFAULT_LIMIT
    for index in range(default + 1):
        client.post("/organizations", json={"title": f"org {index}"})
    assert client.get(f"/organizations?limit={most}").status_code == 200
    assert client.get(f"/organizations?limit={most + 1}").status_code == 422
    assert len(client.get("/organizations").get_json()["results"]) == default


def test_filter_length(client):
    most = filtering.MAX_LENGTH
    at_most = 'title="' + "a" * (most - len('title=""')) + '"'
    assert len(at_most) == most
    assert client.get("/organizations", query_string={"filter": at_most}).status_code == 200
    over = client.get("/organizations", query_string={"filter": at_most + " "})
    assert over.status_code == 422


def test_filter_terms_and_depth(client):
    terms, depth = filtering.MAX_TERMS, filtering.MAX_DEPTH

    def status(text):
        return client.get("/organizations", query_string={"filter": text}).status_code
    assert status(" OR ".join(['title="a"'] * terms)) == 200
    assert status(" OR ".join(['title="a"'] * (terms + 1))) == 422
    # the top level is the first: a comparison inside `depth - 1` parentheses is at the last
    assert status("(" * (depth - 1) + 'title="a"' + ")" * (depth - 1)) == 200
    assert status("(" * depth + 'title="a"' + ")" * depth) == 422


def test_body_size(client):
    most = caps.MAX_BODY_BYTES

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
    most, value_bytes = problems.MAX_ENTRIES, problems.MAX_VALUE_BYTES
    labels = {f"-bad{index}": "x" for index in range(most + 5)}
    response = client.post("/kubeclusters", json=cluster_body(inventory, labels=labels))
    errors = response.get_json()["errors"]
    assert len(errors) == most + 1  # and one saying how many more
    assert "5 more" in errors[-1]["message"]
    long = client.post("/organizations", json={"title": "A" * (4 * value_bytes)}).get_json()
    (entry,) = long["errors"]
    assert len(entry["value"].encode()) <= value_bytes < 4 * value_bytes


def test_labels_per_record(client, inventory):
    most = MAX_LABELS
    labels = {f"k{index}": "v" for index in range(most)}
    body = cluster_body(inventory, labels=labels)
    assert client.post("/kubeclusters", json=body).status_code == 201
    labels["one-more"] = "v"
    body = dict(body, name="d", labels=labels)
    assert client.post("/kubeclusters", json=body).status_code == 422


def test_idempotency_key_length(client):
    most = idempotency.MAX_KEY_LENGTH

    def status(key):
        return client.post("/organizations", json={"title": key[:20]},
                           headers={"Idempotency-Key": key}).status_code
    assert status("k" * most) == 201
    assert status("k" * (most + 1)) == 422


def test_server_layer_limits_are_the_constants_gunicorn_is_given():
    limits = caps
    spec = importlib.util.spec_from_file_location("gunicorn_conf", ROOT / "gunicorn.conf.py")
    gunicorn_conf = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gunicorn_conf)

    assert (gunicorn_conf.limit_request_line, gunicorn_conf.limit_request_field_size,
            gunicorn_conf.limit_request_fields) == (
        limits.REQUEST_LINE_BYTES, limits.REQUEST_HEADER_FIELD_BYTES, limits.REQUEST_HEADER_FIELDS)
