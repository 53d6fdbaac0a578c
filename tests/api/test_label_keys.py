"""Kubernetes label keys (`app.kubernetes.io/name`) through the API, on both
stores: accepted exactly as the API server accepts them, stored so that
MongoDB (and FerretDB, which refuses a `.` in any key) holds them, quoted in
filters and `group_by`, named unambiguously in events, mapped for
Prometheus; records stored before such keys existed work unchanged."""
import orjson
import pytest

from tests.conftest import assert_problem

NAME = "app.kubernetes.io/name"
REGION = "topology.kubernetes.io/region"
LONGEST = f"{'p' * 61}.{'q' * 61}.{'r' * 61}.{'s' * 67}/{'n' * 63}"  # a 253-char prefix


def _keys_of(value):
    """Every key of every object in a stored document, at any depth."""
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key
            yield from _keys_of(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _keys_of(inner)


def _names(client, **params):
    response = client.get("/kubeclusters", query_string={"limit": 100, **params})
    assert response.status_code == 200, response.get_json()
    return sorted(c["name"] for c in response.get_json()["results"])


@pytest.fixture
def fleet(inventory):
    platform = inventory.platform()["name"]
    made = {
        "api": {NAME: "api", REGION: "eu-west-1", "team": "core"},
        "web": {NAME: "web", REGION: "us-east-1"},
        "db": {"team": "data"},
    }
    for name, labels in made.items():
        inventory.cluster(platform=platform, name=name, labels=labels)
    return made


def test_kubernetes_label_keys_are_kept_and_shown_as_given(client, fleet, store):
    assert client.get("/kubeclusters/api").get_json()["labels"] == fleet["api"]
    stored = store.clusters.collection.find_one({"_id": "api"})
    # no key MongoDB reads as a path, and the keys of old were stored as they are
    assert stored["labels"] == {"app%2Ekubernetes%2Eio/name": "api",
                                "topology%2Ekubernetes%2Eio/region": "eu-west-1",
                                "team": "core"}
    assert not [key for key in _keys_of(stored) if "." in key or key.startswith("$")]


def test_a_patch_merges_kubernetes_keys_one_by_one(client, fleet):
    changed = client.patch("/kubeclusters/api", json={"labels": {
        NAME: None, "app.kubernetes.io/part-of": "shop", REGION: "eu-west-2"}})
    assert changed.status_code == 200, changed.get_json()
    assert changed.get_json()["labels"] == {REGION: "eu-west-2", "team": "core",
                                            "app.kubernetes.io/part-of": "shop"}
    assert client.get("/kubeclusters/api").get_json()["labels"] == \
        changed.get_json()["labels"]


@pytest.mark.parametrize("filter_text, expected", [
    (f'labels."{NAME}"="api"', ["api"]),
    (f'labels."{NAME}"!="api"', ["db", "web"]),
    (f'labels."{NAME}"="w*"', ["web"]),
    (f'labels."{NAME}":*', ["api", "web"]),
    (f'NOT labels."{NAME}":*', ["db"]),
    (f'labels:"{REGION}"', ["api", "web"]),
    (f'labels:"{REGION}" AND labels:team', ["api"]),
    (f'labels."{REGION}"="eu-west-1" OR labels.team="data"', ["api", "db"]),
    ('labels."team"="core"', ["api"]),  # a simple key may be quoted too
    ('labels.team:*', ["api", "db"]),
])
def test_filters_take_a_quoted_label_key(client, fleet, filter_text, expected):
    assert _names(client, filter=filter_text) == expected


@pytest.mark.parametrize("filter_text, column, says", [
    # unquoted, the dots are nesting: the key must be quoted
    (f'labels.{NAME.split("/")[0]}="x"', 8, 'quoted, as in `labels."app.kubernetes.io"`'),
    ('labels."Example.com/name"="x"', 8, "prefix `Example.com` is not a DNS subdomain"),
    ('labels."a/b/c"="x"', 8, "at most one `/`"),
    ('labels."/name"="x"', 8, "prefix (before `/`) is empty"),
    ('labels."example.com/"="x"', 8, "name (after `/`) is empty"),
    (f'labels."{"n" * 64}"="x"', 8, "at most 63 characters"),
    (f'environment="x" AND labels."{"p" * 254}/n"="x"', 28, "at most 253 characters"),
    ('labels."-x"="y"', 8, "beginning and ending with a letter or digit"),
    ('labels:"a..b/c"', 1, "not a DNS subdomain"),
    ('labels."a%2Eb"="x"', 8, "must be letters, digits"),  # the stored form is no key
    ('labels."team', 8, "unterminated string"),
])
def test_a_bad_label_key_in_a_filter_is_422_with_its_column(client, fleet, filter_text,
                                                             column, says):
    body = assert_problem(client.get("/kubeclusters", query_string={"filter": filter_text}),
                          422, "query.filter")
    message = body["errors"][0]["message"]
    assert says in message and message.endswith(f"at column {column}."), message


def test_group_by_takes_a_quoted_label_key_and_names_the_group_so(client, fleet):
    response = client.get("/kubeclusters:summary",
                          query_string={"group_by": f'labels."{NAME}", labels.team'})
    assert response.status_code == 200, response.get_json()
    groups = {(g["key"][f'labels."{NAME}"'], g["key"]["labels.team"]): g["count"]
              for g in response.get_json()["groups"]}
    assert groups == {("api", "core"): 1, ("web", None): 1, (None, "data"): 1}
    # a quoted simple key is the same field, named as usual
    quoted = client.get("/kubeclusters:summary", query_string={"group_by": 'labels."team"'})
    assert {g["key"]["labels.team"]: g["count"] for g in quoted.get_json()["groups"]} == {
        None: 1, "core": 1, "data": 1}


@pytest.mark.parametrize("group_by, says", [
    (f"labels.{NAME.split('/')[0]}", "quoted when it holds a `.` or `/`"),
    ('labels."Example.com/x"', "not a DNS subdomain"),
    (f'labels."{NAME}", labels."{NAME}"', "more than once"),
    ('labels."team', "unterminated string"),
    ('labels."team" x', "is not one"),
])
def test_a_bad_label_in_group_by_is_422(client, fleet, group_by, says):
    body = assert_problem(client.get("/kubeclusters:summary",
                                     query_string={"group_by": group_by}), 422, "query.group_by")
    assert says in body["errors"][0]["message"], body


def test_the_longest_group_by_fits(client, inventory):
    inventory.cluster(labels={LONGEST: "v", "a" * 63: "w"})
    group_by = f'labels."{LONGEST}", labels."{LONGEST[:-1]}", labels.{"a" * 63}'
    response = client.get("/kubeclusters:summary", query_string={"group_by": group_by})
    assert response.status_code == 200, response.get_json()
    assert response.get_json()["groups"] == [{"key": {
        f'labels."{LONGEST}"': "v", f'labels."{LONGEST[:-1]}"': None, f"labels.{'a' * 63}": "w"},
        "count": 1}]


@pytest.mark.parametrize("order_by", [f'labels."{NAME}"', "labels.team desc"])
def test_lists_are_not_ordered_by_labels_and_say_why(client, fleet, order_by):
    body = assert_problem(client.get("/kubeclusters", query_string={"order_by": order_by}),
                          422, "query.order_by")
    assert "not ordered by labels" in body["errors"][0]["message"], body


def test_keys_at_the_limits_are_accepted(client, inventory):
    assert len(LONGEST.split("/")[0]) == 253
    labels = {LONGEST: "longest", "n" * 63: "name", "a": "one", "A_b-c.D": "mixed",
              "x.y": "1", "x-y": "2", "x_y": "3", "x2Ey": "4"}  # the last: an escape's look
    cluster = inventory.cluster(labels=labels)
    assert cluster["labels"] == labels
    for key, value in labels.items():
        assert _names(client, filter=f'labels."{key}"="{value}"') == [cluster["name"]], key


@pytest.mark.parametrize("key, says", [
    (f"{'p' * 254}/n", "prefix (before `/`) is at most 253"),
    (f"{'p' * 253}/{'n' * 64}", "at most 317 characters"),
    ("n" * 64, "name is at most 63"),
    ("example.com/" + "n" * 64, "name (after `/`) is at most 63"),
    ("Example.com/name", "prefix `Example.com` is not a DNS subdomain"),
    ("example..com/name", "not a DNS subdomain"),
    ("-example.com/name", "not a DNS subdomain"),
    ("example_com/name", "not a DNS subdomain"),
    ("a/b/c", "at most one `/`"),
    ("/name", "prefix (before `/`) is empty"),
    ("example.com/", "name (after `/`) is empty"),
    ("", "cannot be empty"),
    ("name.", "beginning and ending with a letter or digit"),
    ("_name", "beginning and ending with a letter or digit"),
    ("na me", "must be letters, digits"),
    ("a%2Eb", "must be letters, digits"),  # what a stored key looks like is no key
    ("$where", "must be letters, digits"),
    ("ünïcode", "must be letters, digits"),
])
def test_a_key_that_is_not_a_kubernetes_label_key_is_422_naming_the_part(
        client, inventory, key, says):
    platform = inventory.platform()["name"]
    response = client.post("/kubeclusters", json={
        "name": "c", "platform": platform, "environment": "dev", "version": "1.31.0",
        "labels": {key: "x", "fine": "y"}})
    body = assert_problem(response, 422, f"body.labels.{key}.key")
    assert says in body["errors"][0]["message"], body
    # the same key in a change is refused the same way, and nothing is written
    inventory.cluster(platform=platform, name="kept", labels={"fine": "y"})
    response = client.patch("/kubeclusters/kept", json={"labels": {key: "x"}})
    assert_problem(response, 422, f"body.labels.{key}.key")
    assert client.get("/kubeclusters/kept").get_json()["labels"] == {"fine": "y"}


def test_a_record_stored_the_old_way_is_read_filtered_grouped_and_changed(
        client, inventory, store):
    """Before label keys could hold a `.`, a record's labels were stored with
    their keys as they are: such a record works with no migration."""
    made = inventory.cluster(name="old", labels={"seed": "x"})
    stored = store.clusters.collection.find_one({"_id": "old"})
    assert stored["labels"] == {"seed": "x"}  # as the old code stored it
    # a record exactly as written before this change: keys of letters, digits, - and _
    store.clusters.collection.update_one(
        {"_id": "old"}, {"$set": {"labels": {"team": "core", "tier-1": "gold", "a_b": "c"}}})
    assert client.get("/kubeclusters/old").get_json()["labels"] == {
        "team": "core", "tier-1": "gold", "a_b": "c"}
    assert _names(client, filter='labels.team="core" AND labels:tier-1') == ["old"]
    assert _names(client, filter='labels."a_b"="c"') == ["old"]
    summary = client.get("/kubeclusters:summary?group_by=labels.tier-1").get_json()
    assert summary["groups"] == [{"key": {"labels.tier-1": "gold"}, "count": 1}]
    changed = client.patch("/kubeclusters/old", json={"labels": {NAME: "api", "team": None}})
    assert changed.get_json()["labels"] == {"tier-1": "gold", "a_b": "c", NAME: "api"}
    assert store.clusters.collection.find_one({"_id": "old"})["labels"] == {
        "tier-1": "gold", "a_b": "c", "app%2Ekubernetes%2Eio/name": "api"}
    assert made["id"] == changed.get_json()["id"]


def test_events_name_a_kubernetes_key_unambiguously(client, fleet, store):
    client.patch("/kubeclusters/web", json={"labels": {NAME: "www", REGION: None,
                                                       "team": "edge"}})
    events = client.get("/events", query_string={"limit": 100}).get_json()["results"]
    updated = [e for e in events if e["type"] == "kubecluster.updated"][-1]
    assert updated["changes"] == {
        f'labels."{NAME}"': {"from": "web", "to": "www"},
        f'labels."{REGION}"': {"from": "us-east-1", "to": None},
        "labels.team": {"from": None, "to": "edge"}}
    assert updated["object"]["labels"] == {NAME: "www", "team": "edge"}
    created = [e for e in events if e["type"] == "kubecluster.created"
               and e["object"]["name"] == "api"][0]
    assert created["object"]["labels"] == fleet["api"]
    assert client.get(f"/events/{created['id']}").get_json()["object"]["labels"] == \
        fleet["api"]
    # nothing stored holds a key MongoDB would read as a path
    for doc in [*store.events.collection.find({}), *store.clusters.collection.find({})]:
        assert not [key for key in _keys_of(doc) if "." in key or key.startswith("$")], doc
    # an event's object is one JSON string, which holds the keys as they are
    stored = {orjson.loads(doc["_object"])["name"]: doc for doc in store.events.collection.find(
        {"type": "kubecluster.created"})}
    assert orjson.loads(stored["api"]["_object"])["labels"] == fleet["api"]
    assert "keys_escaped" not in stored["api"] and "keys_escaped" not in created
    # an event stored before, its object a document with escaped keys, reads as it was
    slot = store.events.append({
        "key": "old", "type": "kubecluster.created", "occurred_on": created["occurred_on"],
        "actor": "admin", "subject": "/kubeclusters/api", "keys_escaped": True,
        "object": {"name": "api", "labels": {"app%2Ekubernetes%2Eio/name": "api"}}})
    assert client.get(f"/events/evt_{slot}").get_json()["object"] == {
        "name": "api", "labels": {NAME: "api"}}


def test_prometheus_names_a_kubernetes_key_as_kubernetes_sd_does(client, inventory):
    inventory.cluster(name="sd", endpoint="https://sd.example.com", labels={
        NAME: "api", REGION: "eu", "team": "core",
        # three keys that give one name: the first in code point order wins
        "a.b": "dot", "a_b": "underscore", "a-b": "dash"})
    groups = client.get("/integrations/prometheus/targets").get_json()
    labels = {k: v for k, v in groups[0]["labels"].items() if "_label_" in k}
    assert labels == {"__meta_inventory_label_app_kubernetes_io_name": "api",
                      "__meta_inventory_label_topology_kubernetes_io_region": "eu",
                      "__meta_inventory_label_team": "core",
                      "__meta_inventory_label_a_b": "dash"}


def test_argo_cd_gets_the_labels_as_given(client, inventory):
    inventory.cluster(name="argo", labels={NAME: "api", "team": "core"})
    response = client.post("/integrations/argocd/api/v1/getparams.execute", json={
        "applicationSetName": "a", "input": {"parameters": {"filter": f'labels."{NAME}"="api"'}}})
    assert response.status_code == 200, response.get_json()
    [parameters] = response.get_json()["output"]["parameters"]
    assert parameters["labels"] == {NAME: "api", "team": "core"}


def test_a_csv_names_a_kubernetes_key_column_as_a_filter_names_the_field(client, fleet):
    import csv
    import io
    response = client.get("/kubeclusters", query_string={"format": "csv"})
    assert response.status_code == 200, response.get_data(as_text=True)
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    labels = sorted(name for name in rows[0] if name.startswith("labels."))
    assert labels == [f'labels."{NAME}"', f'labels."{REGION}"', "labels.team"]
    by_name = {row["name"]: row for row in rows}
    assert by_name["api"][f'labels."{NAME}"'] == "api" and by_name["db"][f'labels."{NAME}"'] == ""
