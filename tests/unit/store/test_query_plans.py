"""Depth independence where the database is real: every list query shape is an
index-bounded range reading at most one document more than the page.

explain() is a real server's; these run when MONGODB_URI is set. On the
embedded store, tests/unit/store/test_store.py records the queries' shape instead.
"""
import json

import pytest

from inventory.core import filtering
from inventory.store import pages
from inventory.store.pages import PageRequest
from tests.conftest import FERRETDB, REAL_MONGO
from tests.support.recording import RecordingCollection

pytestmark = [
    pytest.mark.skipif(not REAL_MONGO, reason="explain() needs a real MongoDB (set MONGODB_URI)"),
    # FerretDB answers explain() with its own plan (SQLite's), not MongoDB's
    # queryPlanner stages: what these check is MongoDB's planner.
    pytest.mark.skipif(FERRETDB, reason="explain() is MongoDB's: FerretDB's plans are "
                       "SQLite's, without MongoDB's queryPlanner stages"),
]

PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}
SIZE, LIMIT = 300, 20


@pytest.fixture
def estate(store):
    orgs = [store.organizations.create({"title": f"O{i}", "description": ""}, "t")["id"]
            for i in range(3)]
    clusters = []
    for i in range(SIZE):
        org = orgs[i % 3]
        store.platforms.create({"name": f"p{i:04d}", "organization": org, **PLATFORM}, "t")
        clusters.append(store.clusters.create({"name": f"c{i:04d}", "platform": f"p{i % 7:04d}",
                                               "environment": "dev", "version": "1.30",
                                               "labels": {}}, "t"))
    for i in range(SIZE):
        store.scans.create(clusters[0]["name"], 1_700_000_000 + i)
    return orgs, clusters


def finds_of(resource, run):
    """The finds `run` makes on `resource`: [(args, kwargs), ...]."""
    recorder = RecordingCollection(resource.collection)
    resource.collection = recorder
    try:
        run()
    finally:
        resource.collection = recorder.wrapped
    return recorder.finds


def plan_of(resource, run):
    """The explain() of the one find that `run` makes on `resource`."""
    (query,), options = finds_of(resource, run)[-1]
    assert "skip" not in options and options["limit"] == LIMIT + 1
    return resource.collection.unguarded.find(query, sort=options["sort"],
                                              limit=options["limit"]).explain()


def assert_index_bounded(plan):
    winning = json.dumps(plan["queryPlanner"]["winningPlan"])
    assert "IXSCAN" in winning and "COLLSCAN" not in winning, winning
    assert '"SORT"' not in winning, "the index must give the order, not an in-memory sort"
    assert plan["executionStats"]["totalDocsExamined"] <= LIMIT + 1, plan["executionStats"]


@pytest.mark.parametrize("depth", [0, 0.5, 0.9])
def test_plain_list_is_an_index_range_at_any_depth(store, estate, depth):
    after = f"p{int(SIZE * depth):04d}" if depth else None
    assert_index_bounded(plan_of(store.platforms, lambda: store.platforms.list(
        PageRequest(LIMIT, after=after))))


def test_filtered_list_uses_the_reference_index(store, estate):
    tree = filtering.parse('platform="p0003"')
    assert_index_bounded(plan_of(store.clusters, lambda: store.clusters.list(
        PageRequest(LIMIT, tree, "c0100"))))


def test_organization_scoped_list_uses_the_scope_index(store, estate):
    orgs, _ = estate
    assert_index_bounded(plan_of(store.clusters, lambda: store.clusters.list(
        PageRequest(LIMIT, after="c0150", scope=orgs[1]))))


def test_scans_of_a_cluster_are_an_id_range(store, estate):
    _, clusters = estate
    cluster_id = clusters[0]["id"]
    assert_index_bounded(plan_of(store.scans, lambda: store.scans.list_under(
        cluster_id, PageRequest(LIMIT, after=f"{cluster_id}/001700000200"))))


# -- order_by: every declared ordering, both ways, scoped or not -----------

ORDERED = ("organizations", "platforms", "clusters", "tokens")


@pytest.fixture
def tokens(store, estate):
    orgs, _ = estate
    for i in range(SIZE // 10):
        store.tokens.create({"name": f"t{i % 7}", "role": "reader",
                             "organization": orgs[i % 3] if i % 2 else None}, "t")


@pytest.mark.parametrize("name", ORDERED)
@pytest.mark.parametrize("scoped", [False, True])
@pytest.mark.parametrize("backwards", [False, True])
def test_every_ordering_is_an_index_range_at_any_depth(store, estate, tokens, name, scoped,
                                                       backwards):
    resource = getattr(store, name)
    if scoped and resource.scope_field == "_id":
        pytest.skip("a scoped caller sees one organization: no page to order")
    scope = estate[0][1] if scoped else None
    for ordering in resource.orderings.declared:
        def page(after):
            return resource.list(PageRequest(LIMIT, None, after, scope, ordering, backwards))
        middle = page(None).next_after  # a page from a token, deeper than the first
        for after in (None, middle):
            assert_index_bounded(plan_of(resource, lambda: page(after)))


def test_scans_newest_first_are_an_id_range(store, estate):
    _, clusters = estate
    cluster_id = clusters[0]["id"]
    assert_index_bounded(plan_of(store.scans, lambda: store.scans.list_under(
        cluster_id, PageRequest(LIMIT, after=f"{cluster_id}/001700000200", backwards=True))))


# -- a filtered page's work is bounded, whatever the filter -----------------

BOUND = 50  # MAX_EXAMINED, lowered so that a 300-record estate spans windows


@pytest.fixture
def small_window(monkeypatch):
    monkeypatch.setattr(pages, "MAX_EXAMINED", BOUND)


def plans_of_filtered_page(resource, run):
    """explain() of the window's key read and of the page's read."""
    finds = finds_of(resource, run)
    (window_query, projection), window_options = finds[-2]
    (query,), options = finds[-1]
    assert window_options["skip"] == BOUND - 1 and "skip" not in options
    raw = resource.collection.unguarded
    window = raw.find(window_query, projection, **window_options).explain()
    page = raw.find(query, **options).explain()
    return window, page


@pytest.mark.parametrize("flt", ['environment="nowhere"', 'title="Rare*" OR labels:team',
                                 'NOT version>="1.0"', 'support.status="unsupported"',
                                 'support.status="supported" AND environment="dev"',
                                 'NOT support.status!="ending" OR labels:team'])
@pytest.mark.parametrize("depth", [0, 0.5])
@pytest.mark.parametrize("order_by", [None, "version", "last_scanned_on desc",
                                      "environment, version desc"])
def test_a_filter_no_index_serves_examines_at_most_the_bound(store, estate, small_window,
                                                            flt, depth, order_by):
    from inventory.resources.clusters.spec import SPEC

    CLUSTERS = SPEC.orderings
    ordering, backwards = CLUSTERS.resolve(order_by) if order_by else (None, False)
    after = None
    if depth:  # where a walk stands after SIZE * depth records
        after = store.clusters.list(PageRequest(int(SIZE * depth), ordering=ordering,
                                                backwards=backwards)).next_after
    window, page = plans_of_filtered_page(store.clusters, lambda: store.clusters.list(
        PageRequest(LIMIT, filtering.parse(flt), after, None, ordering, backwards)))
    # the window is keys only, from the index: no document is read for it
    assert "IXSCAN" in json.dumps(window["queryPlanner"]["winningPlan"])
    assert window["executionStats"]["totalDocsExamined"] == 0, window["executionStats"]
    assert window["executionStats"]["totalKeysExamined"] <= BOUND + 1
    winning = json.dumps(page["queryPlanner"]["winningPlan"])
    assert "IXSCAN" in winning and "COLLSCAN" not in winning and '"SORT"' not in winning
    assert page["executionStats"]["totalDocsExamined"] <= BOUND, page["executionStats"]


def test_a_scoped_filtered_page_examines_at_most_the_bound(store, estate, small_window):
    orgs, _ = estate
    window, page = plans_of_filtered_page(store.clusters, lambda: store.clusters.list(
        PageRequest(LIMIT, filtering.parse('environment="nowhere"'), scope=orgs[0])))
    assert window["executionStats"]["totalDocsExamined"] == 0
    assert page["executionStats"]["totalDocsExamined"] <= BOUND


# -- the change feed: every query a page, a wait and a resume make ----------


def _feed_plans(store, run):
    """The explain() of every find `run` makes on the feed."""
    recorder = RecordingCollection(store.events.collection)
    store.events.collection = recorder
    try:
        run()
    finally:
        store.events.collection = recorder.wrapped
    for (query, *projection), options in recorder.finds:
        cursor = recorder.wrapped.unguarded.find(query, *projection,
                                                     sort=options.get("sort"),
                                                     limit=options.get("limit", 0))
        yield query, options, cursor.explain()


@pytest.mark.parametrize("filtered", [False, True])
@pytest.mark.parametrize("scoped", [False, True])
@pytest.mark.parametrize("depth", [0, 0.9])
def test_every_feed_page_is_a_slot_range(store, estate, filtered, scoped, depth):
    orgs, _ = estate
    slots = [d["_id"] for d in store.events.collection.find({}, {"_id": 1}, sort=[("_id", 1)])]
    after = slots[int(len(slots) * depth)] if depth else None
    tree = filtering.parse('type="kubecluster.*"') if filtered else None
    plans = list(_feed_plans(store, lambda: store.events.page(
        PageRequest(LIMIT, tree, after, orgs[1] if scoped else None))))
    assert plans
    for query, options, plan in plans:
        winning = json.dumps(plan["queryPlanner"]["winningPlan"])
        assert "IXSCAN" in winning and "COLLSCAN" not in winning, (query, winning)
        assert '"SORT"' not in winning, winning
        # a page reads at most its bounded window of slots
        assert plan["executionStats"]["totalDocsExamined"] <= 1001, (query, plan["executionStats"])


def test_resuming_and_waiting_read_one_slot_by_index(store, estate):
    newest = store.events.end_slot(-1)
    for run in (lambda: store.events.resolve(f"evt_{newest}", "query.after"),
                lambda: store.events.end_slot(1), lambda: store.events.end_slot(-1)):
        for query, options, plan in _feed_plans(store, run):
            assert plan["executionStats"]["totalDocsExamined"] <= 1, (query, plan)


# -- fleet summaries: one aggregation, served by an index as far as the filter allows

def explain_summary(store, run):
    """(explain() of the one aggregation `run` sends, its answer)."""
    sent = []
    collection = store.clusters.collection

    class Recording:
        def aggregate(self, pipeline, **kwargs):
            sent.append(pipeline)
            return collection.aggregate(pipeline, **kwargs)

    store.clusters.collection = Recording()
    try:
        answer = run()
    finally:
        store.clusters.collection = collection
    assert len(sent) == 1, "a summary is one aggregation"
    explained = store.db.unguarded.command(
        "explain", {"aggregate": "clusters", "pipeline": sent[0], "cursor": {}},
        verbosity="executionStats")
    return explained, answer


def _docs_examined(explained):
    """totalDocsExamined, wherever the server's version puts executionStats."""
    found = []

    def visit(node):
        if isinstance(node, dict):
            if "totalDocsExamined" in node:
                found.append(node["totalDocsExamined"])
            for value in node.values():
                visit(value)
        elif isinstance(node, list):
            for value in node:
                visit(value)
    visit(explained)
    assert found, explained
    return found[0]


def test_a_scoped_summary_reads_only_its_organization_through_the_scope_index(store, estate):
    orgs, _ = estate
    explained, (groups, total) = explain_summary(store, lambda: store.clusters.summary(
        None, ("version", "support.status"), scope=orgs[0]))
    plan = json.dumps(explained)
    assert "IXSCAN" in plan and "COLLSCAN" not in plan, plan
    assert total == store.clusters.collection.count_documents({"organization": orgs[0]}) > 0
    assert _docs_examined(explained) == total  # each of its clusters once, no other


def test_a_summary_filtered_by_platform_uses_the_platform_index(store, estate):
    explained, (groups, total) = explain_summary(store, lambda: store.clusters.summary(
        filtering.parse('platform="p0001"'), ("environment",)))
    plan = json.dumps(explained)
    assert "IXSCAN" in plan and "COLLSCAN" not in plan, plan
    assert _docs_examined(explained) == total


@pytest.mark.parametrize("flt", ['support.status="unsupported"', 'support.status="supported"',
                                 'support.status!="extended"'])
@pytest.mark.parametrize("scoped", [False, True])
def test_a_summary_by_support_status_reads_its_version_ranges_from_the_index(
        store, estate, flt, scoped):
    orgs, _ = estate
    explained, (groups, total) = explain_summary(store, lambda: store.clusters.summary(
        filtering.parse(flt), ("support.status",), scope=orgs[0] if scoped else None))
    plan = json.dumps(explained)
    assert "IXSCAN" in plan and "COLLSCAN" not in plan, plan
    assert _docs_examined(explained) == total  # only the clusters in the ranges


def test_an_unfiltered_summary_reads_each_cluster_once(store, estate):
    """Counting every cluster reads every cluster: once, in one pass."""
    explained, (groups, total) = explain_summary(store, lambda: store.clusters.summary(
        None, ("environment", "version")))
    assert total == SIZE and _docs_examined(explained) == SIZE


# -- readiness: stored, so that an index serves its status ----------------------

@pytest.fixture
def observed(store, estate):
    """A third of the clusters observed on another minor: readiness `error`."""
    _, clusters = estate
    for cluster in clusters[::3]:
        store.scans.create_under(cluster["name"], {"scanned_on": 1_700_000_000,
                                                   "server": {"git_version": "v1.28.3"}}, None)
    return len(clusters[::3])


def test_a_readiness_status_filter_walks_its_index(store, estate, observed):
    tree = filtering.parse('readiness.status="error"')
    assert_index_bounded(plan_of(store.clusters, lambda: store.clusters.list(
        PageRequest(LIMIT, tree, "c0100"))))


@pytest.mark.parametrize("scoped", [False, True])
def test_a_summary_and_the_blockers_by_readiness_status_read_only_its_range(
        store, estate, observed, scoped):
    orgs, _ = estate
    scope = orgs[0] if scoped else None
    tree = filtering.parse('readiness.status="error"')
    for run in (lambda: store.clusters.summary(tree, ("readiness.status",), scope=scope),
                lambda: store.clusters.blockers(tree, scope=scope)):
        explained, (_, total) = explain_summary(store, run)
        plan = json.dumps(explained)
        assert "IXSCAN" in plan and "COLLSCAN" not in plan, plan
        assert _docs_examined(explained) == total > 0  # only the erring clusters
    assert store.clusters.summary(tree, ("readiness.status",))[1] == observed


@pytest.mark.parametrize("kind", ["platforms", "clusters", "tokens"])
def test_a_recount_reads_an_organizations_children_through_an_index(store, estate, kind):
    """The release step's recount (inventory.store.quotas) counts by organization."""
    collection = store.clusters.quotas.children[kind]
    plan = collection.unguarded.find({"organization": estate[0][0]}, {"_id": 1}).explain()
    winning = json.dumps(plan["queryPlanner"]["winningPlan"])
    assert "IXSCAN" in winning and "COLLSCAN" not in winning, winning


# -- webhooks and tokens: the deliverers' queries, the lease, the log, revocation

def _winning(plan):
    return json.dumps(plan["queryPlanner"]["winningPlan"])


def test_the_deliverers_due_query_uses_its_index(store):
    from datetime import datetime

    for index in range(50):
        store.webhooks.create({"url": f"https://hooks{index}.example.invalid/x"}, "t")
    now = datetime.utcnow()
    query = {"active": True, "_next_attempt_at": {"$lte": now}, "_lease_until": {"$lt": now},
             "_position": {"$lt": "z"}, "_deleting": {"$exists": False}}
    winning = _winning(store.webhooks.collection.unguarded.find(query).explain())
    assert "IXSCAN" in winning and "active" in winning and "COLLSCAN" not in winning, winning


def test_the_rollouts_due_look_uses_its_index(store):
    from datetime import datetime

    for index in range(30):
        store.rollouts.create({"name": f"r{index}", "title": "", "target": "1.32",
                               "stages": [{"name": "all", "filter": "", "soak": "PT0S",
                                           "approval": True}]}, "t")
    # due: its planned look came, or the change feed moved past its counts
    query = {"_deleting": {"$exists": False}, "$or": [
        {"_due": {"$lte": datetime.utcnow()}}, {"_seen": {"$lt": 10 ** 9}}]}
    winning = _winning(store.rollouts.collection.unguarded.find(
        query, {"_id": 1, "_due": 1, "_seen": 1}).explain())
    assert "IXSCAN" in winning and "_due" in winning and "_seen" in winning \
        and "COLLSCAN" not in winning, winning


def test_a_lease_a_log_page_and_a_revocation_check_are_keyed(store):
    made, _ = store.webhooks.create({"url": "https://hooks.example.invalid/x"}, "t")
    for attempt in range(30):
        store.webhooks.log(made["id"], "evt_0000000000000001", attempt + 1, 500, None, 1)
    key = made["id"]
    for collection, query in ((store.webhooks.collection, {"_id": key, "_lease_owner": "w"}),
                              (store.webhooks.deliveries,
                               {"_id": {"$gt": f"{key}/", "$lt": f"{key}0"}})):
        winning = _winning(collection.unguarded.find(query).explain())
        assert "COLLSCAN" not in winning and ("IDHACK" in winning or "IXSCAN" in winning), winning
    token, _ = store.tokens.create({"name": "t", "role": "reader"}, "t")
    plan = store.tokens.collection.unguarded.find({"_id": token["id"]}).explain()
    assert "COLLSCAN" not in _winning(plan)


def test_the_outbox_sweep_reads_only_pending_records_through_its_sparse_index(store, estate):
    """On a shared database the sweep asks each collection for records with
    events older than the cutoff: the sparse `_outbox_since` index, never a
    pass over the collection (the issue's stalls at 1.2M records)."""
    from datetime import datetime

    for source in store.events.sources:
        query = {"_outbox_since": {"$lt": datetime.utcnow()}}
        winning = _winning(source.collection.unguarded.find(query, {"_id": 1}).explain())
        assert "IXSCAN" in winning and "_outbox_since" in winning \
            and "COLLSCAN" not in winning, (source.collection.name, winning)


# -- forced deletes: a cascade's batches, and the look for interrupted deletes


@pytest.mark.parametrize("child", ["platforms", "clusters", "tokens", "webhooks"])
def test_a_cascades_batch_of_children_is_read_through_the_parent_index(store, estate, child):
    from inventory.store import deletes

    resource = getattr(store, child)
    query = {resource.spec.parent_field: {"$in": [estate[0][0], "p0001"]}}
    plan = resource.collection.unguarded.find(query, limit=deletes.CASCADE_BATCH).explain()
    winning = _winning(plan)
    assert "IXSCAN" in winning and resource.spec.parent_field in winning \
        and "COLLSCAN" not in winning, (child, winning)


def test_the_look_for_interrupted_deletes_reads_only_marked_records(store, estate):
    """Every DELETES_SWEEP_SECONDS each process asks each collection for
    marked records: the sparse `_deleting` index, never a pass."""
    store.clusters.mark_deleting({"_id": "c0001"}, forced=True)
    for resource in store.listed():
        if resource.spec.name == "scans":
            continue  # never marked, never asked
        plan = resource.collection.unguarded.find({"_deleting": {"$exists": True}},
                                                  {"_id": 1}).explain()
        winning = _winning(plan)
        assert "IXSCAN" in winning and "_deleting" in winning \
            and "COLLSCAN" not in winning, (resource.spec.name, winning)
