"""Parallel writers, with real threads against the app served over HTTP: by
a threaded server in this process (on the embedded store, or MONGODB_URI's
server), and on MONGODB_URI's server by gunicorn's two workers and by two
instances (tests/support/races.py, `served`). Each race runs many rounds,
and every round is checked for the anomalies the store's protocol rules out
(inventory/store/base.py). A guarantee about parallel writers is only shown
by running them in parallel, many times."""
import threading
import time

import pytest

from tests.conftest import REAL_MONGO, make_config
from tests.support.races import ROUNDS, Anomalies, run_together

PLATFORM = {"control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}

pytestmark = pytest.mark.slow


@pytest.fixture
def config():
    """Tenants' tokens send hundreds of rounds of parallel requests here, and
    make thousands of records in one organization: no rate limit, cap on
    requests in flight or quota in the way (tests/api/test_limits.py and
    tests/api/test_quotas.py race those)."""
    return make_config(RATE_LIMIT="1000000 per minute", RATE_LIMIT_ANONYMOUS="1000000 per minute",
                       CONCURRENT_REQUESTS=0, QUOTA_PLATFORMS=1_000_000,
                       QUOTA_CLUSTERS=1_000_000, QUOTA_TOKENS=1_000_000)


def orphans(store):
    """Children whose parent is gone, and tokens whose organization is."""
    org_ids = {d["_id"] for d in store.db.organizations.find({})}
    platforms = {d["_id"] for d in store.db.platforms.find({})}
    cluster_ids = {d["id"] for d in store.db.clusters.find({})}
    return ([d["_id"] for d in store.db.platforms.find({}) if d["organization"] not in org_ids]
            + [d["_id"] for d in store.db.clusters.find({}) if d["platform"] not in platforms]
            + [d["_id"] for d in store.db.scans.find({}) if d["cluster"] not in cluster_ids]
            + [d["_id"] for d in store.db.tokens.find({})
               if d["organization"] is not None and d["organization"] not in org_ids])


def foreign_clusters(store):
    """Clusters whose organization is not their platform's."""
    owner = {d["_id"]: d["organization"] for d in store.db.platforms.find({})}
    return [d["_id"] for d in store.db.clusters.find({})
            if d["platform"] in owner and d["organization"] != owner[d["platform"]]]


def stale_scan_times(store):
    """Clusters whose last_scanned_on is not the newest of their own scans."""
    newest = {}
    for scan in store.db.scans.find({}):
        newest[scan["cluster"]] = max(newest.get(scan["cluster"], 0), scan["scanned_on"])
    return [(d["_id"], d.get("last_scanned_on"), newest.get(d["id"]))
            for d in store.db.clusters.find({}) if d.get("last_scanned_on") != newest.get(d["id"])]


def org(served, title="Acme"):
    return served("POST", "/organizations", {"title": title}).body["id"]


def cluster_body(name, platform):
    return {"name": name, "platform": platform, "environment": "dev", "version": "1.30"}


# -- the races the issue found ----------------------------------------------


def test_a_cluster_never_lands_under_another_tenants_platform_of_the_same_name(served, store):
    """Clusters are created on platform p of organization A (with A's token)
    while A force-deletes p and B (with B's token) creates a platform named p."""
    a, b = org(served, "A"), org(served, "B")
    token_a, token_b = (served("POST", "/tokens", {"name": name, "role": "writer",
                                                   "organization": tenant}).body["token"]
                        for name, tenant in (("a", a), ("b", b)))
    anomalies, requests = Anomalies("cluster vs platform delete and re-create"), 0
    for round_ in range(ROUNDS):
        name = f"p{round_}"
        served("POST", "/kubeplatforms", {"name": name, "organization": a, **PLATFORM},
               token=token_a)

        def take_the_name():  # B takes the name as soon as it is free
            for _ in range(400):
                answer = served("POST", "/kubeplatforms", {"name": name, "organization": b,
                                                           **PLATFORM}, token=token_b)
                if answer.status != 409:
                    return answer
            return answer
        calls = [lambda i=i: served("POST", "/kubeclusters", cluster_body(f"c{round_}-{i}", name),
                                    token=token_a) for i in range(4)]
        calls += [lambda: served("DELETE", f"/kubeplatforms/{name}?force=true", token=token_a),
                  take_the_name]
        answers = run_together(calls)
        requests += len(calls)
        anomalies.check("unexpected status", [a.status for a in answers[:4]
                                              if a.status not in (201, 422)])
        anomalies.check("delete failed", answers[4].status != 204 and answers[4].status)
        anomalies.check("B could not take the name", answers[5].status != 201 and answers[5].status)
        anomalies.check("cluster under another organization's platform", foreign_clusters(store))
        for answer in answers[:4]:  # a 201 is either gone with A's platform or A's still
            if answer.status == 201:
                anomalies.check("acknowledged cluster now under B",
                                answer.body["organization"] != a and answer.body["name"])
        # B's platform has no cluster of B's: its unforced delete must succeed
        deleted = served("DELETE", f"/kubeplatforms/{name}", token=token_b)
        requests += 1
        anomalies.check("B's delete refused over a cluster B cannot see",
                        deleted.status != 204 and (deleted.status, deleted.body))
        anomalies.check("orphans", orphans(store))
    anomalies.assert_none(ROUNDS, requests)


def test_a_token_never_outlives_its_organization(served, store):
    """Tokens of organization O are made while O is force-deleted."""
    anomalies, requests = Anomalies("token vs organization delete"), 0
    for round_ in range(ROUNDS):
        o = org(served, f"O{round_}")
        calls = [lambda i=i: served("POST", "/tokens", {"name": f"t{i}", "role": "reader",
                                                         "organization": o}) for i in range(5)]
        calls += [lambda: served("DELETE", f"/organizations/{o}?force=true")]
        answers = run_together(calls)
        requests += len(calls)
        anomalies.check("delete failed", answers[-1].status != 204 and answers[-1].status)
        anomalies.check("unexpected status", [a.status for a in answers[:-1]
                                              if a.status not in (201, 422)])
        anomalies.check("token of a deleted organization kept",
                        store.db.tokens.count_documents({"organization": o}))
        for answer in answers[:-1]:
            if answer.status == 201:
                still = served("GET", "/kubeclusters", token=answer.body["token"]).status
                requests += 1
                anomalies.check("token of a deleted organization authenticates", still != 401 and still)
    anomalies.assert_none(ROUNDS, requests)


def test_a_scan_belongs_to_the_cluster_it_named(served, store):
    """Scans are posted to cluster c while c is deleted and created again."""
    o = org(served)
    served("POST", "/kubeplatforms", {"name": "p", "organization": o, **PLATFORM})
    anomalies, requests = Anomalies("scan vs cluster delete and re-create"), 0
    for round_ in range(ROUNDS):
        name = f"c{round_}"
        served("POST", "/kubeclusters", cluster_body(name, "p"))

        done = threading.Event()

        def replace():
            try:
                first = served("DELETE", f"/kubeclusters/{name}")
                return first, served("POST", "/kubeclusters", cluster_body(name, "p"))
            finally:
                done.set()

        def scanner(i):  # scans until the cluster has been replaced
            answers, tick = [], 0
            while not done.is_set() and tick < 50:
                tick += 1
                answers.append(served("POST", f"/kubeclusters/{name}/scans",
                                      {"scanned_on": 1_000_000 + round_ * 1000 + i * 50 + tick}))
            return answers
        results = run_together([lambda i=i: scanner(i) for i in range(4)] + [replace])
        deleted, created = results[-1]
        answers = [answer for batch in results[:-1] for answer in batch]
        requests += len(answers) + 2
        anomalies.check("replace failed", (deleted.status, created.status) != (204, 201)
                        and (deleted.status, created.status))
        anomalies.check("unexpected status", [a.status for a in answers
                                              if a.status not in (201, 404)])
        new_id = created.body["id"]
        for answer in answers:
            if answer.status == 201 and answer.body["cluster"] != new_id:  # the old cluster's
                anomalies.check("a scan of the old cluster survived it",
                                store.db.scans.count_documents({"id": answer.body["id"]}))
        anomalies.check("last_scanned_on is not the newest of the cluster's own scans",
                        stale_scan_times(store))
        anomalies.check("orphans", orphans(store))
    anomalies.assert_none(ROUNDS, requests)


# -- races the store has always had to win ------------------------------------


def test_parallel_creates_of_one_slug_give_one_201_and_the_rest_409(served):
    o = org(served)
    anomalies = Anomalies("parallel creates of one slug")
    for round_ in range(ROUNDS):
        body = {"name": f"same-{round_}", "organization": o, **PLATFORM}
        statuses = [a.status for a in run_together(
            [lambda: served("POST", "/kubeplatforms", body)] * 8)]
        anomalies.check("not one 201 and seven 409",
                        (statuses.count(201), statuses.count(409)) != (1, 7) and statuses)
    anomalies.assert_none(ROUNDS, ROUNDS * 8)


def test_parallel_patches_with_if_match_lose_no_update(served):
    path = f"/organizations/{org(served)}"
    anomalies = Anomalies("parallel If-Match patches")
    for _ in range(ROUNDS):
        etag = served("GET", path).headers["ETag"]  # every writer read this version
        answers = run_together([lambda i=i: served("PATCH", path, {"description": f"writer {i}"},
                                                   {"If-Match": etag}) for i in range(6)])
        statuses = [a.status for a in answers]
        anomalies.check("not one 200 and five 412",
                        (statuses.count(200), statuses.count(412)) != (1, 5) and statuses)
        winner = [a.body["description"] for a in answers if a.status == 200]
        anomalies.check("the stored value is not the winner's",
                        winner and served("GET", path).body["description"] != winner[0])
    anomalies.assert_none(ROUNDS, ROUNDS * 8)


def test_parallel_label_patches_never_exceed_the_label_limit(served, store):
    o = org(served)
    served("POST", "/kubeplatforms", {"name": "p", "organization": o, **PLATFORM})
    anomalies = Anomalies("parallel label patches")
    for round_ in range(ROUNDS):
        name = f"labelled-{round_}"
        served("POST", "/kubeclusters", cluster_body(name, "p"))
        answers = run_together([lambda w=w: served("PATCH", f"/kubeclusters/{name}", {
            "labels": {f"w{w}-{k}": "v" for k in range(40)}}) for w in range(4)])
        statuses = sorted(a.status for a in answers)
        anomalies.check("not one 200 and three 422", statuses != [200, 422, 422, 422] and statuses)
        labels = store.db.clusters.find_one({"_id": name})["labels"]
        anomalies.check("over 64 labels stored", len(labels) > 64 and len(labels))
    anomalies.assert_none(ROUNDS, ROUNDS * 5)


def test_parallel_retries_of_one_scan_make_one_scan(served, store):
    o = org(served)
    served("POST", "/kubeplatforms", {"name": "p", "organization": o, **PLATFORM})
    anomalies = Anomalies("parallel Idempotency-Key retries")
    for round_ in range(ROUNDS):
        name = f"c{round_}"
        served("POST", "/kubeclusters", cluster_body(name, "p"))
        answers = run_together([lambda: served("POST", f"/kubeclusters/{name}/scans",
                                               {"scanned_on": 7},
                                               {"Idempotency-Key": f"one-scan-{round_}"})] * 6)
        statuses = [a.status for a in answers]
        anomalies.check("a status other than 201 or 409",
                        (201 not in statuses or not set(statuses) <= {201, 409}) and statuses)
        cluster_id = store.db.clusters.find_one({"_id": name})["id"]
        anomalies.check("not exactly one scan",
                        store.db.scans.count_documents({"cluster": cluster_id}) != 1)
    anomalies.assert_none(ROUNDS, ROUNDS * 7)


def test_parallel_observed_scans_leave_only_the_newest_holding_observations(served, store):
    """Agents' scans of one cluster posted at once, newer and older mixed:
    once they are answered, the scans holding observations are the newest
    the cluster lists (at most kept + spare - 1), its newest among them, and
    the cluster's observations are its newest scan's."""
    from inventory.core.caps import OBSERVED_SCANS_KEPT, OBSERVED_SCANS_SPARE
    from inventory.resources.scans.store import OBSERVED_FIELD
    o = org(served)
    served("POST", "/kubeplatforms", {"name": "p", "organization": o, **PLATFORM})
    scan = {"agent": {"name": "agent", "version": "1"}, "server": {"git_version": "v1.30.4"},
            "nodes": {"count": 2, "kubelet_versions": {"v1.30.4": 2}}}
    anomalies = Anomalies("parallel observed scans of one cluster")
    for round_ in range(ROUNDS):
        name = f"o{round_}"
        served("POST", "/kubeclusters", cluster_body(name, "p"))
        # 8 at once, in an order of their own (some land behind newer ones)
        times = [(round_ * 7 + i * 5) % 8 * 10 + 100 for i in range(8)]
        answers = run_together([lambda t=t: served("POST", f"/kubeclusters/{name}/scans",
                                                   {"scanned_on": t, **scan})
                                for t in times])
        anomalies.check("a scan refused", [a.status for a in answers]
                        if any(a.status != 201 for a in answers) else None)
        cluster = store.db.clusters.find_one({"_id": name})
        holding = sorted(doc["scanned_on"] for doc in store.db.scans.find(
            {"cluster": cluster["id"], OBSERVED_FIELD: {"$exists": True}}))
        listed = cluster.get("_observed_scans") or []
        case = (name, holding, listed)
        anomalies.check("more scans hold observations than kept + spare - 1", case if len(
            holding) >= OBSERVED_SCANS_KEPT + OBSERVED_SCANS_SPARE else None)
        anomalies.check("the newest scan holds none", None if max(times) in holding else case)
        anomalies.check("observations held by scans the cluster does not list",
                        None if len(holding) == len(listed) else case)
        anomalies.check("the cluster's observations are not its newest scan's",
                        None if cluster["observed"]["scanned_on"] == max(times)
                        else (case, cluster["observed"]))
    anomalies.assert_none(ROUNDS, ROUNDS * 10)


def test_clusters_created_while_their_platform_is_deleted_are_never_orphaned(served, store):
    o = org(served)
    anomalies, requests = Anomalies("cluster creates vs platform delete"), 0
    for round_ in range(ROUNDS):
        platform = f"p{round_}"
        served("POST", "/kubeplatforms", {"name": platform, "organization": o, **PLATFORM})
        creates = [lambda i=i: served("POST", "/kubeclusters", cluster_body(f"c{round_}-{i}",
                                                                            platform))
                   for i in range(5)]
        answers = run_together(creates + [
            lambda: served("DELETE", f"/kubeplatforms/{platform}?force=true")])
        requests += 6
        anomalies.check("delete failed", answers[-1].status != 204 and answers[-1].status)
        anomalies.check("unexpected status", [a.status for a in answers[:-1]
                                              if a.status not in (201, 422)])
        anomalies.check("orphans", orphans(store))
        anomalies.check("a cluster outlived its platform",
                        store.db.clusters.count_documents({"platform": platform}))
    anomalies.assert_none(ROUNDS, requests)


def test_forced_delete_of_an_organization_racing_creates_leaves_no_orphans(served, store):
    anomalies, requests = Anomalies("creates vs organization delete"), 0
    for round_ in range(ROUNDS):
        o = org(served, f"O{round_}")
        served("POST", "/kubeplatforms", {"name": f"base{round_}", "organization": o, **PLATFORM})
        served("POST", "/kubeclusters", cluster_body(f"basec{round_}", f"base{round_}"))
        calls = [lambda i=i: served("POST", "/kubeplatforms", {
                     "name": f"r{round_}-{i}", "organization": o, **PLATFORM}) for i in range(3)]
        calls += [lambda i=i: served("POST", "/kubeclusters", cluster_body(
            f"rc{round_}-{i}", f"base{round_}")) for i in range(3)]
        calls += [lambda: served("POST", f"/kubeclusters/basec{round_}/scans", {})] * 3
        calls += [lambda: served("POST", "/tokens", {"name": "t", "role": "reader",
                                                     "organization": o})] * 2
        calls += [lambda: served("DELETE", f"/organizations/{o}?force=true")]
        answers = run_together(calls)
        requests += len(calls)
        anomalies.check("delete failed", answers[-1].status != 204 and answers[-1].status)
        anomalies.check("a 5xx", [a.status for a in answers if a.status >= 500])
        anomalies.check("orphans", orphans(store))
        anomalies.check("a platform outlived its organization",
                        store.db.platforms.count_documents({"organization": o}))
    anomalies.assert_none(ROUNDS, requests)


def test_a_delete_repeated_while_it_runs_finishes_once(served, store):
    """Two DELETEs of one record at once: both succeed or one finds it gone;
    nothing is left behind either way."""
    anomalies = Anomalies("parallel deletes of one record")
    o = org(served)
    for round_ in range(ROUNDS):
        name = f"twice-{round_}"
        served("POST", "/kubeplatforms", {"name": name, "organization": o, **PLATFORM})
        served("POST", "/kubeclusters", cluster_body(f"{name}-c", name))
        answers = run_together([lambda: served("DELETE", f"/kubeplatforms/{name}?force=true")] * 3)
        statuses = [a.status for a in answers]
        anomalies.check("no 204, or a status other than 204/404",
                        (204 not in statuses or not set(statuses) <= {204, 404}) and statuses)
        anomalies.check("left behind", store.db.platforms.count_documents({"_id": name})
                        + store.db.clusters.count_documents({"platform": name}))
    anomalies.assert_none(ROUNDS, ROUNDS * 5)


@pytest.mark.parametrize("served", ["app"], indirect=True)  # the test's threads, whoever serves
def test_race_rounds_are_real(served):
    """The threads of a round do overlap: a request started by the barrier
    is still running when another one starts (else the races prove nothing)."""
    spans = []

    def timed():
        start = time.perf_counter()
        served("GET", "/healthz")
        spans.append((start, time.perf_counter()))
    for _ in range(20):
        spans.clear()
        run_together([timed] * 6)
        starts, ends = [s for s, _ in spans], [e for _, e in spans]
        if max(starts) < min(ends):
            return
    pytest.fail("the threads of a round never overlapped")


# -- order_by walks while others write ----------------------------------------


def stale_order_keys(store):
    """Clusters whose stored order keys are not those of their values."""
    return [d["_id"] for d in store.db.clusters.find({})
            if any(d.get(field) != key for field, key in store.clusters.order_fields(d).items())]


@pytest.mark.parametrize("order_by", ["version desc", "environment, version desc",
                                      "last_scanned_on"])
@pytest.mark.parametrize("sliced", [False, pytest.param(True, marks=pytest.mark.skipif(
    REAL_MONGO, reason="the embedded store's walks"))], ids=["whole", "sliced"])
def test_a_walk_in_any_order_sees_every_steady_record_once_while_others_write(
        served, store, order_by, sliced, request):
    """Steady clusters (there throughout, their sort values unchanged) come
    exactly once, in order, however others create, change, scan and delete
    clusters meanwhile; and every write leaves its order keys right.
    `sliced`: on the embedded store, every page's walk gives way after each
    record it examines and queues as a long walk (inventory/embedded/lock.py, "Long walks"),
    so the writers land in the middle of pages too."""
    from inventory.core.ordering import parse
    from inventory.resources.clusters.spec import SPEC

    CLUSTERS = SPEC.orderings
    from tests.support.ordering import expected

    # the list serves this order itself (BadOrdering if not): a walk by its index
    ordering, backwards = CLUSTERS.resolve(order_by)
    assert (ordering.reversed() if backwards else ordering) == parse(order_by)
    if sliced:
        request.getfixturevalue("sliced_long_walks")
    platform = served("POST", "/kubeplatforms", {"name": "p", "organization": org(served),
                                                 **PLATFORM}).body["name"]
    versions = ["1.9", "1.29", "v1.31.2-eks-1", "1.30", "1.31"]
    steady = [served("POST", "/kubeclusters", {**cluster_body(f"s{i:02d}", platform),
                                               "version": versions[i % 5],
                                               "environment": ("dev", "prod")[i % 2]}).body
              for i in range(24)]
    anomalies, requests = Anomalies(f"walk in {order_by} order"), 0
    walks = max(1, ROUNDS // 10)
    for round_ in range(walks):
        stop, done = threading.Event(), [0]

        def write(worker):
            n = 0
            while not stop.is_set():
                name = f"v{round_}-{worker}-{n % 3}"
                served("POST", "/kubeclusters", {**cluster_body(name, platform),
                                                 "version": versions[n % 5]})
                served("PATCH", f"/kubeclusters/{name}", {"version": versions[(n + 2) % 5],
                                                          "environment": "prod"})
                served("POST", f"/kubeclusters/{name}/scans", {"scanned_on": 1_700_000_000 + n})
                # the one before goes; the last one stays, for the order-key check
                served("DELETE", f"/kubeclusters/v{round_}-{worker}-{(n - 1) % 3}?force=true")
                n += 1
            done[0] += n * 4
        writers = [threading.Thread(target=write, args=(w,)) for w in range(3)]
        for thread in writers:
            thread.start()
        seen, token = [], ""
        try:
            while True:
                query = f"/kubeclusters?limit=4&order_by={order_by.replace(' ', '%20')}"
                page = served("GET", query + (f"&continue={token}" if token else "")).body
                requests += 1
                seen += [r["name"] for r in page["results"]]
                token = page["pagination"]["continue"]
                if not token:
                    break
        finally:
            stop.set()
            for thread in writers:
                thread.join()
        requests += done[0]
        steady_seen = [name for name in seen if name.startswith("s")]
        anomalies.check("steady record missing or repeated",
                        sorted(steady_seen) != sorted(r["name"] for r in steady))
        anomalies.check("steady records out of order", steady_seen != [
            r["name"] for r in expected(steady, order_by, "name") if r["name"] in steady_seen])
        anomalies.check("stale order keys", stale_order_keys(store))
    anomalies.assert_none(walks, requests)
