"""The record filter: parsing, compiling and results, on every list."""
import json
import time

import mongomock_ng
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inventory.core import filtering
from inventory.core.errors import BadFilter
from inventory.core.lifecycle import DISTRIBUTION_FIELD, VERSION_KEY_FIELD
from inventory.core.versions import version_key
from inventory.resources.clusters.store import ClusterStore
from inventory.store.query import EMITTED_OPERATORS
from tests.conftest import assert_problem, walk

CLUSTERS = [
    # name, environment, version, labels
    ("alpha", "production", "1.9.0", {"team": "core"}),
    ("bravo", "production", "v1.31.2-eks-1234", {"team": "edge", "tier": "gold"}),
    ("charlie", "staging", "1.30.1", {}),
    ("delta", "dev", "1.29.0", {"team": "core"}),
    ("echo", "production", "1.28.15", {"tier": "*"}),
]


@pytest.fixture
def estate(inventory):
    acme, globex = inventory.org(title="Acme Corp"), inventory.org(title="Globex")
    eks = inventory.platform(org=acme["id"], name="eks-prod", title="Acme EKS")
    gke = inventory.platform(org=globex["id"], name="gke-eu", title="Globex GKE",
                             control_plane={"provider": "gke"},
                             infrastructure={"cloud": {"provider": "gcp"}})
    for name, env, version, labels in CLUSTERS:
        platform = gke if name == "echo" else eks
        inventory.cluster(platform=platform["name"], name=name, environment=env,
                          version=version, labels=labels)
    for t in (100, 200, 300, 400):
        inventory.scan("alpha", t)
    return {"acme": acme["id"], "globex": globex["id"]}


def names(client, path, flt, key="name"):
    records, _ = walk(client, path, filter=flt, limit=2)
    return [r[key] for r in records]


@pytest.mark.parametrize("flt, expected", [
    ('environment="production"', ["alpha", "bravo", "echo"]),
    ('environment!="production"', ["charlie", "delta"]),
    ('environment="production" AND labels.team="core"', ["alpha"]),
    ('environment="dev" OR environment="staging"', ["charlie", "delta"]),
    ('environment="dev" OR environment="production" AND labels:tier', ["bravo", "delta", "echo"]),
    ('(environment="dev" OR environment="production") AND labels:tier', ["bravo", "echo"]),
    ('NOT environment="production"', ["charlie", "delta"]),
    ('NOT (labels:team)', ["charlie", "echo"]),
    ("labels:team", ["alpha", "bravo", "delta"]),
    ('labels:"tier"', ["bravo", "echo"]),
    ('labels.team:"core"', ["alpha", "delta"]),
    ('labels.tier="\\*"', ["echo"]),
    ('version<"1.29"', ["alpha", "echo"]),
    ('version<"1.30"', ["alpha", "delta", "echo"]),
    ('version>="1.31"', ["bravo"]),
    ('version="1.31.2"', ["bravo"]),
    ('version="1.30*"', ["charlie"]),
    ('version="1*"', ["alpha", "bravo", "charlie", "delta", "echo"]),
    ('name="b*"', ["bravo"]),
    ('name!="b*"', ["alpha", "charlie", "delta", "echo"]),
    ('name>"charlie"', ["delta", "echo"]),
    ('platform="gke-eu"', ["echo"]),
    ("last_scanned_on>=400", ["alpha"]),
    ('name="nothing"', []),
    ('environment="production*" AND NOT name="alpha"', ["bravo", "echo"]),
    # presence: `field:*` holds a value; NOT: absent or null ("never scanned")
    ("last_scanned_on:*", ["alpha"]),
    ("NOT last_scanned_on:*", ["bravo", "charlie", "delta", "echo"]),
    ("endpoint:*", []),
    ("labels:*", ["alpha", "bravo", "delta", "echo"]),
    ("NOT labels:*", ["charlie"]),
    ("labels.tier:*", ["bravo", "echo"]),
    ('environment="production" AND NOT last_scanned_on:*', ["bravo", "echo"]),
])
def test_cluster_filters(client, estate, flt, expected):
    assert names(client, "/kubeclusters", flt) == expected


def test_filter_by_organization_on_clusters(client, estate):
    assert names(client, "/kubeclusters", f'organization="{estate["globex"]}"') == ["echo"]


@pytest.mark.parametrize("flt, expected", [
    ('control_plane.provider="gke"', ["gke-eu"]),
    ('infrastructure.cloud.provider="aws"', ["eks-prod"]),
    ('title="Acme*"', ["eks-prod"]),
    ('created_on>="2000-01-01T00:00:00Z"', ["eks-prod", "gke-eu"]),
    ('created_on<"2000-01-01T01:00:00+01:00"', []),
    ('created_by="admin"', ["eks-prod", "gke-eu"]),
])
def test_platform_filters(client, estate, flt, expected):
    assert names(client, "/kubeplatforms", flt) == expected


@pytest.mark.parametrize("flt, expected", [
    ('title="Acme Corp"', ["Acme Corp"]),
    ('title="G*"', ["Globex"]),
    ('title="Acme Corp" OR title="Globex"', ["Acme Corp", "Globex"]),
])
def test_organization_filters(client, estate, flt, expected):
    assert names(client, "/organizations", flt, key="title") == expected


@pytest.mark.parametrize("flt, expected", [
    ("scanned_on>=200", [200, 300, 400]),
    ("scanned_on<200 OR scanned_on=400", [100, 400]),
    ("NOT scanned_on=300", [100, 200, 400]),
])
def test_scan_filters(client, estate, flt, expected):
    assert names(client, "/kubeclusters/alpha/scans", flt, key="scanned_on") == expected


@pytest.mark.parametrize("flt, fragment", [
    ('colour="red"', 'colour="red"'),                 # unknown field
    ('environment=="x"', '="x"'),                    # bad operator
    ('environment="production', '"production'),      # unterminated string
    ('environment="production" AND', ""),            # dangling AND
    ('scanned_on="x"', None),                        # checked per list below
    ('environment ~ "x"', "~"),                      # unknown character
    ("environment=production", "production"),        # unquoted value
    ('(environment="dev"', "("),                     # unclosed parenthesis
    ('environment="dev")', ")"),                     # stray parenthesis
    ('NOT', ""),                                     # nothing after NOT
    ('version<"latest"', 'version<"latest"'),       # not a version
    ('created_on>"yesterday"', 'created_on>"yesterday"'),
    ('last_scanned_on>"1"', 'last_scanned_on>"1"'),  # type mismatch
    ('name<"b*"', 'name<"b*"'),                      # prefix with <
    ('labels="x"', 'labels="x"'),                    # a map compared whole
    ('labels.$where="1"', "$"),                      # not a label key
    ('environment:{"$ne": null}', "{"),              # no operator smuggling
    ("and=1", "and=1"),                              # keywords are upper case: unknown field
    ("name=*", "*"),                                 # a bare * follows ':' only
    ("support.status:*", "support.status:*"),        # computed: always present
    ("colour:*", "colour:*"),                        # unknown field, present or not
    ("", None),                                      # empty is "no filter", see below
])
def test_bad_cluster_filter_is_422_at_query_filter(client, estate, flt, fragment):
    if flt in ("", 'scanned_on="x"'):
        return
    body = assert_problem(client.get("/kubeclusters", query_string={"filter": flt}), 422,
                          "query.filter")
    entry = body["errors"][0]
    assert "column" in entry["message"]
    assert fragment in entry["value"]


@pytest.mark.parametrize("flt", ['version="1.31-rc.1*"', 'version="1.31-rc*"',
                                 'version="v1.31.2-eks*"', 'version!="1.29+k3s*"',
                                 'version="1.31.2-eks-1234*"'])
def test_a_version_prefix_after_a_suffix_is_422_that_says_why(client, estate, flt):
    """Versions compare by their numbers, their suffix ignored (1.31.2-eks-1
    is 1.31.2), so a prefix ends on a number: `1.31-rc.1*` meant 1.31.0
    only and `1.31-rc*` every 1.31.x, depending on the dots in the suffix."""
    body = assert_problem(client.get("/kubeclusters", query_string={"filter": flt}), 422,
                          "query.filter")
    message = body["errors"][0]["message"]
    assert "suffix" in message and "1.31*" in message


@pytest.mark.parametrize("flt, expected", [
    ('version="1.31*"', ["bravo"]),
    ('version="v1.31*"', ["bravo"]),
    ('version="1.31.2*"', ["bravo"]),
    ('version="1.3*"', []),  # the minor 3, not every minor starting with 3
    ('version!="1.31*"', ["alpha", "charlie", "delta", "echo"]),
    ('version="1.9*"', ["alpha"]),
])
def test_a_version_prefix_is_every_version_with_those_numbers(client, estate, flt, expected):
    assert names(client, "/kubeclusters", flt) == expected


def test_scanned_on_compared_with_a_string_is_422(client, estate):
    body = assert_problem(client.get("/kubeclusters/alpha/scans",
                                     query_string={"filter": 'scanned_on="x"'}), 422, "query.filter")
    assert "integer" in body["errors"][0]["message"]


def test_empty_filter_means_no_filter(client, estate):
    assert len(names(client, "/kubeclusters", "")) == len(CLUSTERS)


@pytest.mark.parametrize("flt", ['title="' + "x" * 2000 + '"',
                                 "(" * 40 + 'title="x"' + ")" * 40,
                                 "NOT " * 40 + 'title="x"'])
def test_long_or_deep_filters_are_refused(client, flt):
    assert_problem(client.get("/organizations", query_string={"filter": flt}), 422, "query.filter")


def quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.mark.parametrize("literal", ['{"$ne": null}', ".*", "^", "|", "$where", 'a"b', "back\\slash"])
def test_values_match_only_their_literal_text(client, inventory, literal):
    inventory.org(title=literal)
    inventory.org(title="other")
    assert names(client, "/organizations", f"title={quote(literal)}", key="title") == [literal]


def test_versions_compare_as_versions():
    assert version_key("1.9.0") < version_key("1.29") < version_key("1.30.1")
    assert version_key("v1.31.2-eks-1234") == version_key("1.31.2")


# -- properties: whatever the input, a 422 or a query of our own operators --

COMPILER = ClusterStore(mongomock_ng.MongoClient().db).filter_compiler
# the stored path of each filter field (`readiness.status`, the version keys)
STORED_PATHS = {COMPILER.stored_name(field) for field in ClusterStore.filter_fields}


def operators_in(query):
    if isinstance(query, dict):
        for key, value in query.items():
            if key.startswith("$"):
                yield key
            yield from operators_in(value)
    elif isinstance(query, list):
        for item in query:
            yield from operators_in(item)


def assert_safe(query):
    assert set(operators_in(query)) <= EMITTED_OPERATORS
    # no user value may sit where a key is: every key is a known field path or an operator
    def keys(node):
        if isinstance(node, dict):
            for key, value in node.items():
                assert key.startswith("$") or key in STORED_PATHS or key.split(".")[0] in {
                    "_id", DISTRIBUTION_FIELD, VERSION_KEY_FIELD,
                    *ClusterStore.filter_fields}, key
                keys(value)
        elif isinstance(node, list):
            for item in node:
                keys(item)
    keys(query)


def compile_text(text):
    try:
        return COMPILER.compile(filtering.parse(text))
    except BadFilter:
        return None


@pytest.mark.slow
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_random_text_is_a_422_or_a_safe_query(text):
    query = compile_text(text)
    if query is not None:
        assert_safe(query)


FIELDS = st.sampled_from(sorted(ClusterStore.filter_fields) + ["labels.team", "labels.$x", "nope"])
VALUES = st.one_of(st.text(max_size=12).map(lambda s: json.dumps(s)), st.integers().map(str),
                   st.sampled_from(["true", "false", '"1.30"', '"v1.2.3-x"', '"a*"',
                                    '"2026-11-01T00:00:00Z"', '{"$gt": ""}',
                                    '"supported"', '"e*"']))
COMPARISONS = st.builds(lambda f, o, v: f"{f}{o}{v}", FIELDS,
                        st.sampled_from(["=", "!=", "<", "<=", ">", ">=", ":"]), VALUES)
TREES = st.recursive(COMPARISONS, lambda inner: st.one_of(
    st.builds(lambda a, b: f"{a} AND {b}", inner, inner),
    st.builds(lambda a, b: f"{a} OR {b}", inner, inner),
    st.builds(lambda a: f"NOT {a}", inner),
    st.builds(lambda a: f"({a})", inner)), max_leaves=12)


@pytest.mark.slow
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(TREES)
def test_random_valid_trees_are_a_422_or_a_safe_query(text):
    query = compile_text(text)
    if query is not None:
        assert_safe(query)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[
    HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(text=st.one_of(TREES, st.text(max_size=60)))
def test_random_filters_through_http_never_500(client, text):
    response = client.get("/kubeclusters", query_string={"filter": text})
    assert response.status_code in (200, 422), response.get_json()


def test_a_relative_time_is_resolved_once_for_a_whole_walk(client, inventory, monkeypatch):
    """`created_on<"-PT0S"`: made before the first page was asked for. Records
    made between two pages do not join the walk: the token carries the
    instant the first page resolved it against."""
    from inventory.http import lists

    for index in range(4):
        inventory.org(title=f"Before{index}")
    time.sleep(0.005)  # instants are in milliseconds: none shared with a record
    # the first resolution is the real now; any later one would take in everything
    instants = iter([lists.now_rfc3339(), "2200-01-01T00:00:00.000Z"])
    monkeypatch.setattr(lists, "now_rfc3339", lambda: next(instants))
    first = client.get("/organizations", query_string={
        "filter": 'created_on<"-PT0S"', "limit": 2}).get_json()
    time.sleep(0.005)
    for index in range(3):
        inventory.org(title=f"After{index}")
    rest, token = [], first["pagination"]["continue"]
    while token:
        page = client.get("/organizations", query_string={
            "filter": 'created_on<"-PT0S"', "limit": 2, "continue": token}).get_json()
        rest += page["results"]
        token = page["pagination"]["continue"]
    assert [org["title"] for org in first["results"] + rest] == [f"Before{i}" for i in range(4)]
    assert next(instants) == "2200-01-01T00:00:00.000Z"  # resolved once: the first page's


@pytest.mark.parametrize("flt", ['created_on>="-P1Y"', 'created_on>="-P"', 'created_on>="-PT"',
                                 'created_on>="-P99999999D"', 'created_on>="-PT1H*"',
                                 'created_on>="+PT1H"'])
def test_a_bad_relative_time_is_422(client, flt):
    assert_problem(client.get("/organizations", query_string={"filter": flt}), 422,
                   "query.filter")
