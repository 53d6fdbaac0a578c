"""The clusters' store (inventory/resources/clusters/store.py): a cluster is
made only on a platform the caller sees, follows its platform's lifecycle
and is addressed by slug or id; label keys of any characters kept as given,
at most MAX_LABELS; a recorded version moves its version key and readiness;
ETags carry today's support, If-Match compares the stored part; a scan
recorded on its cluster (newer parts replace older, late ones change
nothing, an event only when what was observed or the readiness' status
changed); records written before a field existed get it; summaries and
blockers counted in one aggregation, largest first, ties in the field's order."""
import pytest

from inventory.core.errors import InvalidRecord, InvalidReference, NotFound, StaleRevision
from inventory.core.filtering import parse
from inventory.core.labels import MAX_LABELS
from inventory.core.lifecycle import DISTRIBUTION_FIELD, SUPPORT_DATE_FIELDS, minor_of
from inventory.core.rollouts import standing
from inventory.resources.clusters.spec import ROLLOUT_STANDING_FIELD
from inventory.resources.clusters.store import ClusterStore, Recorded
from inventory.store.pages import PageRequest
from inventory.store.records import REVISION
from tests.support.stores import PLATFORM


@pytest.fixture
def org(store):
    org = store.organizations.create({"title": "Acme", "description": ""}, "tester")
    store.platforms.create({"name": "eks", "organization": org["id"], **PLATFORM}, "t")
    store.platforms.create({"name": "up", "organization": org["id"], **PLATFORM,
                            "control_plane": {"provider": "openshift"}}, "t")
    return org


def _cluster(store, name="c1", version="1.30.1", platform="eks", scope=None, **fields):
    return store.clusters.create({"name": name, "platform": platform, "environment": "dev",
                                  "version": version, "labels": {}, **fields}, "t", scope=scope)


def _updated_events(store):
    return [event for event in store.events.page(PageRequest(100)).records
            if event["type"] == "kubecluster.updated"]


def test_a_cluster_follows_its_platforms_lifecycle_and_organization(store, org):
    on_eks, upstream = _cluster(store, "a"), _cluster(store, "b", platform="up")
    assert on_eks["organization"] == org["id"] and on_eks["id"].startswith("k8scl_")
    assert on_eks["support"]["lifecycle"]["distribution"] == "eks"
    assert upstream["support"]["lifecycle"]["distribution"] == "upstream"


def test_a_cluster_on_no_such_platform_or_one_out_of_scope_is_refused(store, org):
    with pytest.raises(InvalidReference) as refused:
        _cluster(store, platform="missing")
    assert refused.value.field == "platform"
    with pytest.raises(InvalidReference):
        _cluster(store, scope="org_another")
    assert store.clusters.find_doc("c1") is None


def test_a_cluster_is_addressed_by_its_slug_or_its_id(store, org):
    made = _cluster(store)
    assert store.clusters.get(made["id"])["name"] == "c1"
    assert store.clusters.get("c1")["id"] == made["id"]
    with pytest.raises(NotFound):
        store.clusters.get("k8scl_" + "0" * 32)


def test_label_keys_are_kept_as_given_and_merged_key_by_key(store, org):
    made = _cluster(store, labels={"app.kubernetes.io/name": "api", "team": "core"})
    assert made["labels"] == {"app.kubernetes.io/name": "api", "team": "core"}
    stored = store.clusters.find_doc("c1")["labels"]
    assert not any("." in key for key in stored)  # no key a field path cannot hold
    changed = store.clusters.update("c1", {"labels": {"team": None, "a.b$c": "d"}}, "t")
    assert changed["labels"] == {"app.kubernetes.io/name": "api", "a.b$c": "d"}
    assert store.clusters.get("c1")["labels"] == changed["labels"]


def test_at_most_max_labels_on_create_and_after_a_change(store, org):
    full = {f"k{index}": "v" for index in range(MAX_LABELS)}
    _cluster(store, labels=full)
    with pytest.raises(InvalidRecord) as refused:
        store.clusters.update("c1", {"labels": {"one-more": "v"}}, "t")
    assert refused.value.field == "labels"
    assert store.clusters.get("c1")["labels"] == full
    with pytest.raises(InvalidRecord):
        _cluster(store, "c2", labels={**full, "one-more": "v"})
    assert store.clusters.find_doc("c2") is None


def test_a_recorded_version_moves_its_version_key_and_readiness_target(store, org):
    assert _cluster(store)["readiness"]["target"] == "1.31"
    older = store.clusters.compile_filter(parse('version<"1.31"'))
    assert store.clusters.collection.find_one(older)["_id"] == "c1"
    assert store.clusters.update("c1", {"version": "1.31.2"}, "t")["readiness"]["target"] \
        == "1.32"
    assert store.clusters.collection.find_one(older) is None


def test_an_etag_carries_todays_support_and_if_match_compares_the_stored_part(store, org):
    made = _cluster(store)
    status, ends_on = made["support"]["status"], made["support"]["ends_on"]
    assert made.revision.endswith(f"-{status}-{ends_on}")
    changed = store.clusters.update("c1", {"environment": "prod"}, "t",
                                    revisions=[made.revision])
    assert changed["environment"] == "prod"
    with pytest.raises(StaleRevision):  # the revision read before the change
        store.clusters.update("c1", {"environment": "dev"}, "t", revisions=[made.revision])
    with pytest.raises(StaleRevision):  # `If-Match: ""`
        store.clusters.update("c1", {"environment": "dev"}, "t", revisions=[None])
    assert ClusterStore.stored_revisions(None) is None
    store.clusters.delete("c1", revisions=[changed.revision])
    assert store.clusters.find_doc("c1") is None


def _scan(number, scanned_on, server=None, **parts):
    return {"_id": f"scan-{number:03d}", "id": f"k8scs_{number:03d}", "scanned_on": scanned_on,
            **({"server": {"git_version": server}} if server else {}), **parts}


def test_a_newer_scan_replaces_what_was_observed_and_a_late_one_changes_nothing(store, org):
    _cluster(store)
    recorded = store.clusters.record_scan(store.clusters.find_doc("c1"),
                                          _scan(1, 100, "v1.30.4"))
    assert recorded == Recorded(late=False, let_go=[])
    record = store.clusters.get("c1")
    assert record["observed"]["version"] == "v1.30.4" and record["last_scanned_on"] == 100
    late = store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(2, 50, "v1.29.0"))
    assert late.late
    record = store.clusters.get("c1")
    assert record["observed"]["version"] == "v1.30.4" and record["last_scanned_on"] == 100
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(3, 200, "v1.31.0"))
    record = store.clusters.get("c1")
    assert (record["observed"]["version"], record["observed"]["scanned_on"],
            record["last_scanned_on"]) == ("v1.31.0", 200, 200)


def test_a_scan_of_nothing_observed_only_raises_last_scanned_on(store, org):
    _cluster(store)
    before = store.clusters.get("c1")
    assert store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(1, 100)) == \
        Recorded(late=False, let_go=[])
    after = store.clusters.get("c1")
    assert after["last_scanned_on"] == 100
    assert (after["observed"], after["readiness"]) == (before["observed"], before["readiness"])
    # an older one lowers nothing
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(2, 50))
    assert store.clusters.get("c1")["last_scanned_on"] == 100


def test_a_scan_is_an_event_only_when_what_was_observed_changed(store, org):
    _cluster(store)
    events = len(_updated_events(store))
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(1, 100, "v1.30.4"))
    (event,) = _updated_events(store)[events:]
    assert event["changes"]["observed"]["to"] == {"version": "v1.30.4", "minor": "1.30"}
    # a newer scan of the same version: which scan observed it moves silently
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(2, 200, "v1.30.4"))
    assert len(_updated_events(store)) == events + 1
    assert store.clusters.get("c1")["observed"]["scanned_on"] == 200


def test_a_scan_of_a_cluster_gone_is_not_recorded(store, org):
    _cluster(store)
    doc = store.clusters.find_doc("c1")
    store.clusters.delete("c1")
    assert store.clusters.record_scan(doc, _scan(1, 100, "v1.30.4")) is False
    assert store.clusters.record_scan(doc, _scan(2, 100)) is False


def test_clusters_written_before_a_field_existed_get_it(store, org):
    made = _cluster(store)
    store.clusters.collection.update_one({"_id": "c1"}, {"$unset": {
        "readiness": "", DISTRIBUTION_FIELD: "", ROLLOUT_STANDING_FIELD: "",
        **dict.fromkeys(SUPPORT_DATE_FIELDS.values(), "")}})
    assert store.clusters.add_missing_fields() >= 3
    doc = store.clusters.find_doc("c1")
    assert doc[DISTRIBUTION_FIELD] == "eks" and doc["readiness"]["target"] == "1.31"
    assert all(field in doc for field in SUPPORT_DATE_FIELDS.values())
    assert doc[ROLLOUT_STANDING_FIELD] == "1.30 unknown"  # written with its readiness
    assert store.clusters.get("c1")["support"] == made["support"]
    assert store.clusters.add_missing_fields() == 0  # nothing missing any more


def _standing(store, name="c1"):
    """(the cluster's stored rollout standing, the one its record says)."""
    record = store.clusters.get(name)
    minor = (record["observed"] or {}).get("minor") or minor_of(record["version"])
    return (store.clusters.find_doc(name)[ROLLOUT_STANDING_FIELD],
            standing(minor, record["readiness"]["status"]))


def test_a_clusters_rollout_standing_is_written_with_its_minor_and_readiness(store, org):
    _cluster(store)
    assert _standing(store) == ("1.30 unknown",) * 2
    store.clusters.update("c1", {"version": "1.31.0"}, "t")  # the recorded minor
    assert _standing(store) == ("1.31 unknown",) * 2
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(1, 100, "v1.29.3"))
    stored, told = _standing(store)  # the observed minor wins; readiness from the scan
    assert stored == told and stored.startswith("1.29 ") and stored != "1.29 unknown"
    # a newer scan of the same values: only which scan observed it moves
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(2, 200, "v1.29.3"))
    assert _standing(store) == (stored, told)
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(3, 300, "v1.31.2"))
    assert _standing(store)[0] == _standing(store)[1] and _standing(store)[0].startswith("1.31 ")
    store.clusters.update("c1", {"version": "1.32.0"}, "t")  # the observed minor still wins
    assert _standing(store)[0] == _standing(store)[1] and _standing(store)[0].startswith("1.31 ")


def test_a_backfilled_standing_is_written_only_as_the_cluster_was_read(store, org, monkeypatch):
    """A cluster changed between the backfill's read and its write (by a
    process of the release before, which writes no standing) is left
    without one: the counts read it by the fields it is made of."""
    for name in ("c1", "c2"):
        _cluster(store, name)
    store.clusters.record_scan(store.clusters.find_doc("c2"), _scan(1, 100, "v1.30.1"))
    store.clusters.collection.update_many({}, {"$unset": {ROLLOUT_STANDING_FIELD: ""}})
    collection, find = store.clusters.collection, store.clusters.collection.find

    def read_then_changed(*args, **kwargs):
        for doc in find(*args, **kwargs):
            if doc["_id"] == "c1":  # changed meanwhile, as the release before writes
                collection.update_one({"_id": "c1"}, {"$set": {
                    "readiness.status": "error", REVISION: "elsewhere"}})
            yield doc
    monkeypatch.setattr(collection, "find", read_then_changed)
    assert store.clusters.settle_in_turns() == 1
    monkeypatch.undo()
    assert ROLLOUT_STANDING_FIELD not in store.clusters.find_doc("c1")
    assert _standing(store, "c2")[0] == _standing(store, "c2")[1]
    assert store.clusters.settle_in_turns() == 1  # the next pass: as it now is
    assert _standing(store, "c1") == ("1.30 error",) * 2
    assert store.clusters.settle_in_turns() == 0


def test_a_backfilled_standing_is_written_though_the_cluster_changed_otherwise(
        store, org, monkeypatch):
    """A change of what the standing is not made of (a label, a scan's time)
    between the pass's read and its write does not keep it from writing."""
    _cluster(store)
    store.clusters.collection.update_many({}, {"$unset": {ROLLOUT_STANDING_FIELD: ""}})
    collection, find = store.clusters.collection, store.clusters.collection.find

    def read_then_relabelled(*args, **kwargs):
        for doc in find(*args, **kwargs):
            collection.update_one({"_id": doc["_id"]}, {"$set": {
                "labels.team": "web", REVISION: "elsewhere"}})
            yield doc
    monkeypatch.setattr(collection, "find", read_then_relabelled)
    assert store.clusters.settle_in_turns() == 1
    monkeypatch.undo()
    assert _standing(store) == ("1.30 unknown",) * 2


def test_a_standing_left_behind_is_set_right_by_the_next_scan_of_the_same(store, org):
    """A process of the release before recorded a scan and left the standing
    as it was: the agent's next scan, of the same values, sets it right."""
    _cluster(store, version="1.31.2")
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(1, 100, "v1.32.0"))
    stored, told = _standing(store)
    assert stored == told and stored.startswith("1.32 ")
    store.clusters.collection.update_one({"_id": "c1"}, {"$set": {  # as it was before the scan
        ROLLOUT_STANDING_FIELD: "1.31 passing", REVISION: "elsewhere"}})
    store.clusters.record_scan(store.clusters.find_doc("c1"), _scan(2, 200, "v1.32.0"))
    assert _standing(store) == (stored, told)


def test_a_standing_left_behind_by_the_release_before_is_set_right(store, org):
    """A process of the release before the standing, still serving after the
    release step, writes readiness and leaves the standing as it was: the
    next `create-indexes` sets it right."""
    _cluster(store)
    store.clusters.collection.update_one({"_id": "c1"}, {"$set": {
        "readiness.status": "error", REVISION: "elsewhere"}})
    store.create_indexes()  # the release step
    assert _standing(store) == ("1.30 error",) * 2


def test_a_summary_counts_by_minor_largest_first_then_in_version_order(store, org):
    for name, version, environment in (("a", "1.30.1", "prod"), ("b", "1.30.5", "prod"),
                                       ("c", "1.9.0", "prod"), ("d", "1.10.2", "prod"),
                                       ("e", "1.31.0", "dev")):
        _cluster(store, name, version, environment=environment)
    groups, total = store.clusters.summary(None, ("version",))
    assert groups == [({"version": "1.30"}, 2), ({"version": "1.9"}, 1),
                      ({"version": "1.10"}, 1), ({"version": "1.31"}, 1)]
    assert total == 5
    groups, total = store.clusters.summary(parse('environment="prod"'),
                                           ("environment", "version"))
    assert total == 4 and groups[0] == ({"environment": "prod", "version": "1.30"}, 2)


def test_a_summary_counts_only_the_callers_organization(store, org):
    _cluster(store, "a")
    other = store.organizations.create({"title": "Other", "description": ""}, "t")
    store.platforms.create({"name": "theirs", "organization": other["id"], **PLATFORM}, "t")
    _cluster(store, "b", platform="theirs")
    assert store.clusters.summary(None, ("environment",), scope=org["id"]) == \
        ([({"environment": "dev"}, 1)], 1)
    assert store.clusters.summary(None, ("environment",))[1] == 2


def _requests(removed_release, resource):
    return [{"group": "x.k8s.io", "version": "v1beta1", "resource": resource,
             "subresource": "", "removed_release": removed_release, "requests": 1}]


def test_blockers_count_clusters_per_failing_key_most_first_errors_before_warnings(store, org):
    """On 1.31 clusters (target 1.32): an API removed in 1.32 is an error,
    one removed in 1.33 a warning."""
    for number, (name, removed, resource) in enumerate((
            ("a", "1.32", "things"), ("b", "1.32", "things"), ("c", "1.33", "widgets"),
            ("d", "1.32", "gadgets"))):
        _cluster(store, name, "1.31.2")
        store.clusters.record_scan(store.clusters.find_doc(name), _scan(
            number, 100, deprecated_api_requests=_requests(removed, resource)))
    _cluster(store, "clean", "1.31.2")
    blockers, total = store.clusters.blockers(None)
    assert total == 5
    assert [(check, status, key["resource"], count)
            for (check, status, key), count in blockers] == [
        ("deprecated-apis", "error", "things", 2), ("deprecated-apis", "error", "gadgets", 1),
        ("deprecated-apis", "warning", "widgets", 1)]
