"""Fleet answers: the shipped lifecycle data (its refresh is
tests/unit/cli/test_refresh_lifecycle.py's), the `support` every cluster
reads (computed for today: time is frozen with time-machine), `support.status`
in filters, and `GET /kubeclusters:summary`."""
import datetime
import itertools
import json
import random
import re

import pytest
import time_machine

from inventory.core.grouping import MAX_GROUP_BY
from inventory.core.lifecycle import DATA_PATH, DISTRIBUTIONS, STATUSES, Lifecycles
from tests.conftest import assert_problem, client_with, walk

DATA = json.loads(DATA_PATH.read_text("utf-8"))


def on(day):
    """Freeze today at noon UTC of `day` (`YYYY-MM-DD`)."""
    return time_machine.travel(datetime.datetime.fromisoformat(f"{day}T12:00:00+00:00"),
                               tick=False)


# -- the data -----------------------------------------------------------------

def _minor_key(minor):
    return tuple(int(part) for part in minor.split("."))


def test_the_data_covers_every_distribution_from_1_19_to_the_newest_release():
    newest = max(_minor_key(m) for m in DATA["distributions"]["upstream"])
    assert newest >= (1, 36)
    for distribution in DISTRIBUTIONS:
        minors = sorted(_minor_key(m) for m in DATA["distributions"][distribution])
        # AKS: endoflife.date starts at 1.21 (the README says so)
        oldest = (1, 21) if distribution == "aks" else (1, 19)
        assert minors[0] == oldest, distribution
        assert minors == [(1, n) for n in range(oldest[1], minors[-1][1] + 1)], distribution
        assert minors[-1] >= (1, 36), distribution


def test_every_entry_has_dates_in_order():
    extended = {d: 0 for d in DISTRIBUTIONS}
    for distribution, minors in DATA["distributions"].items():
        for minor, dates in minors.items():
            released = datetime.date.fromisoformat(dates["released_on"])
            standard = datetime.date.fromisoformat(dates["standard_support_ends_on"])
            assert released < standard, (distribution, minor)
            if dates["extended_support_ends_on"]:
                extended[distribution] += 1
                assert standard < datetime.date.fromisoformat(
                    dates["extended_support_ends_on"]), (distribution, minor)
    # extended support: EKS (1.21 on) and AKS LTS (1.27 on); none in the source for the others
    assert extended["eks"] >= 16 and extended["aks"] >= 10
    assert extended["upstream"] == 0 and extended["gke"] == 0


def test_the_source_is_named_with_its_commit_and_date_in_the_file():
    source = DATA["source"]
    assert source["name"] == "endoflife.date" and source["license"] == "MIT"
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    datetime.date.fromisoformat(source["date"])


# -- support on every cluster --------------------------------------------------

PROVIDERS = {"eks": "eks", "gke": "gke", "aks": "aks", "kubeadm": "upstream",
             "EKS": "eks", "openshift": "upstream"}


@pytest.fixture
def platforms(inventory):
    org = inventory.org()["id"]
    return {provider: inventory.platform(org=org, control_plane={"provider": provider})["name"]
            for provider in PROVIDERS}


# (provider, version, day, status, ends_on): every boundary of every status in
# every distribution, from the shipped data (checked against it below)
BOUNDARIES = [
    # EKS 1.31: standard support to 2025-11-26, extended to 2026-11-26
    ("eks", "v1.31.2-eks-1234", "2025-08-27", "supported", "2025-08-28"),
    ("eks", "v1.31.2-eks-1234", "2025-08-28", "ending", "2025-11-26"),
    ("eks", "1.31", "2025-11-25", "ending", "2025-11-26"),
    ("eks", "1.31.1", "2025-11-26", "extended", "2026-11-26"),
    ("EKS", "1.31.1", "2026-11-25", "extended", "2026-11-26"),
    ("eks", "v1.31.2-eks-1234", "2026-11-26", "unsupported", None),
    # GKE 1.29 has no extended support in the data: from standard to unsupported
    ("gke", "1.29.10-gke.1200", "2025-01-11", "supported", "2025-01-12"),
    ("gke", "1.29.10-gke.1200", "2025-01-12", "ending", "2025-04-12"),
    ("gke", "1.29", "2025-04-11", "ending", "2025-04-12"),
    ("gke", "1.29.10-gke.1200", "2025-04-12", "unsupported", None),
    # AKS 1.29: standard to 2025-03-31, long-term support to 2026-04-30
    ("aks", "1.29.3", "2024-12-30", "supported", "2024-12-31"),
    ("aks", "1.29.3", "2024-12-31", "ending", "2025-03-31"),
    ("aks", "1.29.3", "2025-03-31", "extended", "2026-04-30"),
    ("aks", "1.29.3", "2026-04-29", "extended", "2026-04-30"),
    ("aks", "1.29.3", "2026-04-30", "unsupported", None),
    # upstream 1.31 (anything but eks, gke, aks): patches to 2025-11-11, no extension
    ("kubeadm", "1.31.1", "2025-08-12", "supported", "2025-08-13"),
    ("openshift", "1.31.1+k3s1", "2025-08-13", "ending", "2025-11-11"),
    ("kubeadm", "v1.31.0", "2025-11-10", "ending", "2025-11-11"),
    ("kubeadm", "1.31", "2025-11-11", "unsupported", None),
    # versions the data does not know, in every distribution
    ("eks", "1.18.9", "2026-11-23", "unknown", None),
    ("aks", "1.20.7", "2026-11-23", "unknown", None),
    ("gke", "1.99.0-gke.1", "2026-11-23", "unknown", None),
    ("kubeadm", "2.0", "2026-11-23", "unknown", None),
]


def test_the_boundaries_are_the_shipped_data():
    dates = DATA["distributions"]
    assert dates["eks"]["1.31"]["standard_support_ends_on"] == "2025-11-26"
    assert dates["eks"]["1.31"]["extended_support_ends_on"] == "2026-11-26"
    assert dates["gke"]["1.29"]["standard_support_ends_on"] == "2025-04-12"
    assert dates["gke"]["1.29"]["extended_support_ends_on"] is None
    assert dates["aks"]["1.29"]["standard_support_ends_on"] == "2025-03-31"
    assert dates["aks"]["1.29"]["extended_support_ends_on"] == "2026-04-30"
    assert dates["upstream"]["1.31"]["standard_support_ends_on"] == "2025-11-11"


@pytest.mark.parametrize("provider, version, day, status, ends_on", BOUNDARIES)
def test_support_is_computed_for_today(client, inventory, platforms, provider, version, day,
                                       status, ends_on):
    cluster = inventory.cluster(platform=platforms[provider], version=version)
    with on(day):
        support = client.get(f"/kubeclusters/{cluster['name']}").get_json()["support"]
        listed = client.get("/kubeclusters").get_json()["results"][0]["support"]
    assert (support["status"], support["ends_on"]) == (status, ends_on)
    assert listed == support
    lifecycle = support["lifecycle"]
    assert lifecycle["distribution"] == PROVIDERS[provider]
    assert lifecycle["minor"] == re.match(r"v?(\d+\.\d+)", version)[1]
    assert lifecycle["source"].startswith(f"endoflife.date {DATA['source']['date']}")
    known = DATA["distributions"][PROVIDERS[provider]].get(lifecycle["minor"])
    if known is None:
        assert status == "unknown"
        assert lifecycle["released_on"] is None and lifecycle["standard_support_ends_on"] is None
    else:
        assert lifecycle["released_on"] == known["released_on"]
        assert lifecycle["standard_support_ends_on"] == known["standard_support_ends_on"]
        assert lifecycle["extended_support_ends_on"] == known["extended_support_ends_on"]


def test_a_distribution_without_an_announced_end_is_supported_with_no_end():
    lifecycles = Lifecycles(dict(DATA, distributions={
        **{d: {} for d in DISTRIBUTIONS},
        "eks": {"1.37": {"released_on": "2026-09-01", "standard_support_ends_on": None,
                         "extended_support_ends_on": None}}}))
    support = lifecycles.support("eks", "1.37.0", datetime.date(2030, 1, 1))
    assert (support["status"], support["ends_on"]) == ("supported", None)


def test_support_is_never_stored_and_changes_with_the_day_alone(client, inventory, platforms,
                                                                 store):
    cluster = inventory.cluster(platform=platforms["eks"], version="1.31.2")
    path = f"/kubeclusters/{cluster['name']}"
    with on("2025-08-27"):
        before = client.get(path)
    with on("2025-08-28"):
        after = client.get(path)
        assert before.get_json()["support"]["status"] == "supported"
        assert after.get_json()["support"]["status"] == "ending"
        # nothing was written in between, yet the answer changed: so did its ETag
        assert before.get_json()["last_modified_on"] == after.get_json()["last_modified_on"]
        assert before.headers["ETag"] != after.headers["ETag"]
        response = client.get(path, headers={"If-None-Match": before.headers["ETag"]})
        assert response.status_code == 200  # not 304: yesterday's answer is not today's
        response = client.get(path, headers={"If-None-Match": after.headers["ETag"]})
        assert response.status_code == 304
        # If-Match compares what is stored: yesterday's ETag still allows a change...
        response = client.patch(path, json={"title": "t"},
                                headers={"If-Match": before.headers["ETag"]})
        assert response.status_code == 200
        # ...until the record changes
        response = client.patch(path, json={"title": "u"},
                                headers={"If-Match": before.headers["ETag"]})
        assert_problem(response, 412, "header.if-match")
    stored = store.clusters.collection.find_one({"_id": cluster["name"]})
    # (readiness is stored, and has a status of its own: not support's)
    assert "support" not in stored and "status" not in json.dumps(
        {k: v for k, v in stored.items() if k not in ("readiness", "_checks")})


def test_support_follows_a_version_change(client, inventory, platforms):
    cluster = inventory.cluster(platform=platforms["gke"], version="1.29.10-gke.1200")
    with on("2026-11-23"):
        path = f"/kubeclusters/{cluster['name']}"
        assert client.get(path).get_json()["support"]["status"] == "unsupported"
        changed = client.patch(path, json={"version": "1.36.3-gke.1640000"}).get_json()
        assert changed["support"]["status"] == "supported"
        assert changed["support"]["lifecycle"]["minor"] == "1.36"


def test_support_is_read_only_in_bodies(client, inventory, platforms):
    cluster = inventory.cluster(platform=platforms["eks"], version="1.31.2",
                                support={"status": "supported"})
    assert cluster["support"]["lifecycle"]["distribution"] == "eks"
    response = client.patch(f"/kubeclusters/{cluster['name']}",
                            json={"support": {"status": "unknown"}})
    assert response.status_code == 200


def test_clusters_stored_before_lifecycles_get_their_provider_at_the_release_step(
        client, inventory, platforms, store, runner):
    cluster = inventory.cluster(platform=platforms["aks"], version="1.29.3")
    store.clusters.collection.update_one({"_id": cluster["name"]},
                                         {"$unset": {"_distribution": "", "_provider": ""}})
    result = runner.invoke(args=["create-indexes"])
    assert result.exit_code == 0, result.output
    stored = store.clusters.collection.find_one({"_id": cluster["name"]})
    assert stored["_distribution"] == "aks" and stored["_provider"] == "aks"
    with on("2025-06-01"):
        support = client.get(f"/kubeclusters/{cluster['name']}").get_json()["support"]
    assert support["status"] == "extended"


# -- support.status in filters --------------------------------------------------

VERSIONS = ["1.18.9", "1.19.3", "1.25.0", "1.28.15", "v1.29.2-eks-1", "1.29.10-gke.1200",
            "1.30", "1.31.1", "v1.31.2-eks-1234", "1.32.4", "1.33.0", "1.34.1+k3s1", "1.35",
            "1.36.2", "1.37.0", "2.1"]
DAYS = ["2025-08-28", "2025-11-26", "2026-04-30", "2026-11-23"]


@pytest.fixture
def fleet(inventory, platforms):
    """Clusters of every distribution at versions of every shape and age."""
    rng = random.Random(21)
    clusters = []
    for i, (provider, version) in enumerate(itertools.product(PROVIDERS, VERSIONS)):
        clusters.append(inventory.cluster(
            platform=platforms[provider], name=f"c{i:03d}", version=version,
            environment=rng.choice(["production", "staging"]),
            labels=rng.choice([{}, {"team": "core"}, {"team": "edge"}])))
    return clusters


def _statuses(client):
    return {c["name"]: c["support"]["status"] for c in walk(client, "/kubeclusters",
                                                             limit=100)[0]}


@pytest.mark.parametrize("day", DAYS)
def test_support_status_filters_select_exactly_the_clusters_of_that_status(client, fleet, day):
    with on(day):
        statuses = _statuses(client)
        assert set(statuses.values()) >= {"supported", "unsupported", "unknown"}
        for status in STATUSES:
            for op, wanted in (("=", {status}), ("!=", set(STATUSES) - {status}),
                               (":", {status})):
                found, _ = walk(client, "/kubeclusters", limit=7,
                                filter=f'support.status{op}"{status}"')
                names = [c["name"] for c in found]
                assert len(names) == len(set(names))
                assert set(names) == {n for n, s in statuses.items() if s in wanted}, (op, status)
                assert all(c["support"]["status"] in wanted for c in found)
        found, _ = walk(client, "/kubeclusters", filter='support.status="e*"')
        assert {c["name"] for c in found} == {
            n for n, s in statuses.items() if s in ("ending", "extended")}


def _shown(client):
    return walk(client, "/kubeclusters", limit=100)[0]


@pytest.mark.parametrize("day", DAYS)
@pytest.mark.parametrize("field", ["ends_on", "all_ends_on"])
def test_support_date_filters_select_exactly_the_clusters_whose_shown_date_passes(
        client, fleet, day, field):
    """Each comparison with a day, absolute or from today, against what each
    cluster shows; a cluster with no such date passes only `!=` and `NOT :*`."""
    with on(day):
        shown = {c["name"]: c["support"][field] for c in _shown(client)}
        assert None in shown.values() and len(set(shown.values())) > 3
        today = datetime.date.fromisoformat(day)
        pivots = sorted({value for value in shown.values() if value is not None})
        for pivot, text in [(pivots[len(pivots) // 2], pivots[len(pivots) // 2]),
                            ((today + datetime.timedelta(days=60)).isoformat(), "+P60D"),
                            ((today - datetime.timedelta(weeks=2)).isoformat(), "-P2W")]:
            for op, passes in (("=", str.__eq__), ("<", str.__lt__), ("<=", str.__le__),
                               (">", str.__gt__), (">=", str.__ge__)):
                found, _ = walk(client, "/kubeclusters", limit=7,
                                filter=f'support.{field}{op}"{text}"')
                assert {c["name"] for c in found} == {
                    name for name, value in shown.items()
                    if value is not None and passes(value, pivot)}, (op, text)
            found, _ = walk(client, "/kubeclusters", filter=f'support.{field}!="{text}"')
            assert {c["name"] for c in found} == {
                name for name, value in shown.items() if value != pivot}
        for flt, wanted in ((f"support.{field}:*", lambda value: value is not None),
                            (f"NOT support.{field}:*", lambda value: value is None)):
            found, _ = walk(client, "/kubeclusters", filter=flt)
            assert {c["name"] for c in found} == {
                name for name, value in shown.items() if wanted(value)}


def test_what_leaves_support_within_60_days_is_one_request(client, fleet):
    with on("2026-11-25"):
        found, _ = walk(client, "/kubeclusters", filter=(
            'environment="production" AND support.all_ends_on>="+P0D" '
            'AND support.all_ends_on<="+P60D"'))
        assert found and all(c["environment"] == "production" and "2026-11-25"
                             <= c["support"]["all_ends_on"] <= "2027-01-24" for c in found)
        # the case: extended support ending tomorrow reads `extended`, not `ending`
        assert any(c["support"]["status"] == "extended" for c in found)


@pytest.mark.parametrize("flt", ['support.ends_on="soon"', 'support.ends_on="2027-13-01"',
                                 'support.ends_on:"2027"', 'support.all_ends_on="+PT1H"',
                                 'support.all_ends_on>="2027-01*"', "support.ends_on>1"])
def test_bad_support_date_filters_are_422(client, flt):
    assert_problem(client.get("/kubeclusters", query_string={"filter": flt}), 422,
                   "query.filter")


@pytest.mark.parametrize("flt, keep", [
    ('support.status="unsupported" AND environment="production"',
     lambda c: c["support"]["status"] == "unsupported" and c["environment"] == "production"),
    ('NOT support.status="supported" AND labels.team="core"',
     lambda c: c["support"]["status"] != "supported" and c["labels"].get("team") == "core"),
    ('support.status="extended" OR (support.status="unknown" AND version<"2")',
     lambda c: c["support"]["status"] == "extended" or (
         c["support"]["status"] == "unknown" and not c["version"].startswith("2."))),
    ('NOT (support.status="supported" OR support.status="unknown")',
     lambda c: c["support"]["status"] not in ("supported", "unknown")),
    ('support.status!="unsupported" AND platform="platform-2" AND version>="1.30"',
     lambda c: c["support"]["status"] != "unsupported" and c["platform"] == "platform-2"
     and not c["version"].lstrip("v").startswith(("1.1", "1.2"))),
])
@pytest.mark.parametrize("order_by", [None, "version", "version desc", "environment, version",
                                      "name desc"])
def test_support_status_combines_with_every_other_field_not_and_order_by(
        client, fleet, flt, keep, order_by):
    with on("2026-11-23"):
        every = walk(client, "/kubeclusters", limit=100)[0]
        params = {"filter": flt, "limit": 5, **({"order_by": order_by} if order_by else {})}
        found, _ = walk(client, "/kubeclusters", **params)
        ordered, _ = walk(client, "/kubeclusters", limit=100,
                          **({"order_by": order_by} if order_by else {}))
    expected = [c["name"] for c in ordered if keep(c)]
    assert [c["name"] for c in found] == expected
    assert len(expected) < len(every)


def test_a_support_status_page_is_bounded_like_any_filtered_page(client, fleet, monkeypatch):
    from inventory.store import pages
    monkeypatch.setattr(pages, "MAX_EXAMINED", 10)
    with on("2026-11-23"):
        body = client.get("/kubeclusters", query_string={
            "filter": 'support.status="ending"', "limit": 50}).get_json()
        # a window of 10 records, then a token to go on with
        assert body["pagination"]["continue"] and len(body["results"]) <= 10
        found, pages = walk(client, "/kubeclusters", filter='support.status="ending"', limit=50)
        assert pages >= len(fleet) // 10


@pytest.mark.parametrize("flt, message", [
    ('support.status="retired"', "not a support status"),
    ('support.status<"ending"', "compared with = or !="),
    ("support.status=1", "compared with = or !="),
    ("support.status:true", "compared with = or !="),
    ('support.lifecycle.minor="1.31"', "unknown field"),
    ('support="supported"', "unknown field"),
])
def test_bad_support_status_filters_are_422(client, flt, message):
    body = assert_problem(client.get("/kubeclusters", query_string={"filter": flt}), 422,
                          "query.filter")
    assert message in body["errors"][0]["message"]


def test_support_status_compiles_to_version_ranges_per_distribution(store):
    from inventory.core import filtering
    with on("2026-11-23"):
        query = store.clusters.compile_filter(filtering.parse('support.status="supported"'))
    for clause in query["$or"]:
        assert set(clause) <= {"_distribution", "_version_key"}
        assert clause["_distribution"]["$eq"] in DISTRIBUTIONS
        assert set(clause.get("_version_key", {})) <= {"$gte", "$lt"}
    assert {c["_distribution"]["$eq"] for c in query["$or"]} == set(DISTRIBUTIONS)


def test_version_ranges_cover_every_version_once():
    """Per distribution and day, the five statuses' ranges tile the version
    keys, and each version lies in the range of its own status."""
    from inventory.core.lifecycle import LIFECYCLES
    from inventory.core.versions import version_key
    probes = ["0.1", "1.0", "1.18.99", "1.19", "1.19.5", "1.20.0", "1.29.3", "1.31.2",
              "1.36.9", "1.37", "1.99", "9999.9999.999999"]
    for day in DAYS:
        day = datetime.date.fromisoformat(day)
        for distribution in DISTRIBUTIONS:
            for text in probes:
                key = version_key(text)
                holding = [s for s in STATUSES for low, high in LIFECYCLES.version_ranges(
                    distribution, {s}, day) if (low is None or low <= key)
                    and (high is None or key < high)]
                assert holding == [LIFECYCLES.support(distribution, text, day)["status"]], (
                    distribution, text, holding)


# -- summaries -------------------------------------------------------------------

def _brute_counts(client, fields, keep=lambda c: True):
    """The counts a summary must give, from every cluster as listed."""
    providers = {p["name"]: p["control_plane"]["provider"]
                 for p in walk(client, "/kubeplatforms", limit=100)[0]}
    counts = {}
    for cluster in walk(client, "/kubeclusters", limit=100)[0]:
        if not keep(cluster):
            continue
        values = []
        for field in fields:
            if field == "version":
                values.append(cluster["support"]["lifecycle"]["minor"])
            elif field == "support.status":
                values.append(cluster["support"]["status"])
            elif field == "control_plane.provider":
                values.append(providers[cluster["platform"]])
            elif field.startswith("labels."):
                values.append(cluster["labels"].get(field[len("labels."):]))
            else:
                values.append(cluster[field])
        counts[tuple(values)] = counts.get(tuple(values), 0) + 1
    return counts


@pytest.mark.parametrize("group_by", [
    "organization", "platform", "environment", "version", "support.status",
    "control_plane.provider", "labels.team", "version,support.status",
    "environment, version, support.status", "labels.team,control_plane.provider,platform",
    "labels.nothing"])
@pytest.mark.parametrize("flt, keep", [
    (None, lambda c: True),
    ('environment="production"', lambda c: c["environment"] == "production"),
    ('support.status!="supported" AND labels:team',
     lambda c: c["support"]["status"] != "supported" and "team" in c["labels"]),
])
def test_a_summary_counts_what_the_list_shows(client, fleet, group_by, flt, keep):
    fields = [f.strip() for f in group_by.split(",")]
    with on("2026-11-23"):
        response = client.get("/kubeclusters:summary", query_string={
            "group_by": group_by, **({"filter": flt} if flt else {})})
        expected = _brute_counts(client, fields, keep)
    assert response.status_code == 200, response.get_json()
    body = response.get_json()
    assert body["$schema"].endswith("/schemas/KubeClusterSummary.json")
    got = {tuple(group["key"][f] for f in fields): group["count"] for group in body["groups"]}
    assert got == expected
    assert all(set(group["key"]) == set(fields) for group in body["groups"])
    assert body["total"] == sum(expected.values())
    counts = [group["count"] for group in body["groups"]]
    assert counts == sorted(counts, reverse=True)


def test_summary_groups_come_in_descending_count_then_key_order(client, inventory, platforms):
    for version, many in (("1.9.1", 2), ("1.29.1", 2), ("1.31.0", 3), ("1.10", 1)):
        for _ in range(many):
            inventory.cluster(platform=platforms["kubeadm"], version=version)
    inventory.cluster(platform=platforms["kubeadm"], version="1.2", labels={"team": "a"})
    body = client.get("/kubeclusters:summary?group_by=version").get_json()
    assert [(g["key"]["version"], g["count"]) for g in body["groups"]] == [
        ("1.31", 3), ("1.9", 2), ("1.29", 2), ("1.2", 1), ("1.10", 1)]
    body = client.get("/kubeclusters:summary?group_by=labels.team").get_json()
    assert [(g["key"]["labels.team"], g["count"]) for g in body["groups"]] == [
        (None, 8), ("a", 1)]
    with on("2026-11-23"):
        body = client.get("/kubeclusters:summary?group_by=support.status").get_json()
    assert [(g["key"]["support.status"], g["count"]) for g in body["groups"]] == [
        ("unsupported", 5), ("unknown", 4)]
    inventory.cluster(platform=platforms["kubeadm"], version="1.3")  # a tie: lifecycle order
    with on("2026-11-23"):
        body = client.get("/kubeclusters:summary?group_by=support.status").get_json()
    assert [(g["key"]["support.status"], g["count"]) for g in body["groups"]] == [
        ("unsupported", 5), ("unknown", 5)]


def test_a_scoped_token_counts_only_its_organization(app, client, inventory):
    mine, theirs = inventory.org()["id"], inventory.org()["id"]
    for org, count in ((mine, 2), (theirs, 3)):
        platform = inventory.platform(org=org)["name"]
        for _ in range(count):
            inventory.cluster(platform=platform)
    token = client.post("/tokens", json={"name": "dash", "role": "reader",
                                         "organization": mine}).get_json()["token"]
    scoped = client_with(app, token)
    body = scoped.get("/kubeclusters:summary?group_by=organization").get_json()
    assert body == {**body, "groups": [{"key": {"organization": mine}, "count": 2}], "total": 2}
    body = scoped.get("/kubeclusters:summary", query_string={
        "group_by": "environment", "filter": f'organization="{theirs}"'}).get_json()
    assert body["groups"] == [] and body["total"] == 0
    body = client.get("/kubeclusters:summary?group_by=organization").get_json()
    assert body["total"] == 5


def test_a_summary_of_nothing_is_empty(client):
    body = client.get("/kubeclusters:summary?group_by=version").get_json()
    assert body["groups"] == [] and body["total"] == 0


def test_a_summary_answers_with_a_trailing_slash_and_only_to_get(client, fleet, anonymous):
    plain = client.get("/kubeclusters:summary?group_by=environment")
    slashed = client.get("/kubeclusters:summary/?group_by=environment")
    assert plain.status_code == slashed.status_code == 200
    assert plain.get_json() == slashed.get_json()
    response = client.post("/kubeclusters:summary?group_by=environment", json={})
    assert_problem(response, 405)
    assert response.headers["Allow"]
    assert_problem(anonymous.get("/kubeclusters:summary?group_by=environment"), 401)
    # `/kubeclusters/:summary` is a cluster's path, and `:summary` no cluster's name
    assert_problem(client.get("/kubeclusters/:summary?group_by=environment"), 422,
                   "path.cluster")
    # a cluster may still be called `summary`
    assert client.get("/kubeclusters/c000").status_code == 200


@pytest.mark.parametrize("group_by, message", [
    (None, "Missing data"),
    ("", f"Length must be between 1 and {MAX_GROUP_BY}"),
    ("name", "cannot count by `name`"),
    ("labels", "grouped by as `labels.<key>`"),
    ("labels.", "grouped by as `labels.<key>`"),
    ("labels.a.b", "grouped by as `labels.<key>`"),
    ("version,", "an empty entry"),
    ("version,version", "more than once"),
    ("version,environment,platform,organization", "At most 3 fields"),
    ("support.ends_on", "cannot count by"),
    ("version;environment", "separated by commas"),
    ("x" * (MAX_GROUP_BY + 1), f"Length must be between 1 and {MAX_GROUP_BY}"),
])
def test_bad_group_by_is_422_at_query_group_by(client, group_by, message):
    query = {} if group_by is None else {"group_by": group_by}
    body = assert_problem(client.get("/kubeclusters:summary", query_string=query), 422,
                          "query.group_by")
    assert any(message.lower() in e["message"].lower() for e in body["errors"]), body


def test_a_summary_refuses_what_lists_refuse(client):
    assert_problem(client.get("/kubeclusters:summary", query_string={
        "group_by": "version", "filter": 'version="x"'}), 422, "query.filter")
    assert_problem(client.get("/kubeclusters:summary", query_string={
        "group_by": "version", "limit": "5"}), 422, "query.limit")
    assert_problem(client.get("/kubeclusters:summary?group_by=version&group_by=platform"),
                   422, "query.group_by")


def test_a_summary_answers_the_largest_groups_and_total_counts_every_match(
        client, inventory, platforms, monkeypatch):
    from inventory.resources.clusters import store as resources
    monkeypatch.setattr(resources, "MAX_GROUPS", 2)
    for environment, many in (("a", 1), ("b", 3), ("c", 2), ("d", 2)):
        for _ in range(many):
            inventory.cluster(platform=platforms["eks"], environment=environment)
    body = client.get("/kubeclusters:summary?group_by=environment").get_json()
    assert body["groups"] == [{"key": {"environment": "b"}, "count": 3},
                              {"key": {"environment": "c"}, "count": 2}]
    assert body["total"] == 8  # more than the groups add up to: some were left out


@pytest.mark.parametrize("method", ["patch", "delete"])
@pytest.mark.parametrize("header", ['""', '"-"', '"nothing-supported-None"', 'W/"x"'])
def test_if_match_of_no_stored_revision_is_412_on_a_cluster(client, inventory, method, header):
    cluster = inventory.cluster()
    path = f"/kubeclusters/{cluster['name']}"
    response = getattr(client, method)(path, json={"title": "x"} if method == "patch" else None,
                                       headers={"If-Match": header})
    assert_problem(response, 412)
    assert client.get(path).get_json()["title"] == ""


def test_each_support_object_is_new_though_worked_out_once_a_day():
    import datetime

    from inventory.core.lifecycle import LIFECYCLES
    day = datetime.date(2025, 8, 27)
    first = LIFECYCLES.support("eks", "1.31.2", day)
    expected = json.loads(json.dumps(first))
    first["status"] = first["lifecycle"]["minor"] = "changed by a caller"
    assert LIFECYCLES.support("eks", "v1.31.9-eks-1", day) == expected
    assert LIFECYCLES.support("eks", "1.31.2", day + datetime.timedelta(days=1))["status"] \
        == "ending"
