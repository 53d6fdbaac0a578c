"""What reading and advancing a rollout of 5 stages cost beside a fleet
summary, and how long they hold the event loop, at 1,000 / 10,000 /
100,000 clusters, in one run.

The requirement (issue 44): at the envelope (100,000 clusters) reading a
rollout of 5 stages answers in the time a summary does, and no computation
of rollouts holds the event loop past 50 ms. A rollout's read counts its
clusters by stage and state in one aggregation, a summary's (grouped by the
fields its filters read and a state is made of, each group then given to
its stage), and reuses its kept counts while nothing changed.

In process under gevent (everything patched, as the gevent worker runs),
Flask test client, embedded store seeded by bench/seeding.py (a third of
the clusters then made `passing`, so that some are `ready`); a fleet-wide
rollout toward 1.29 of 5 stages (team-0, dev, staging, production of teams
1-4, the rest; team-0's clusters are all at 1.28, so those passing are
`ready` in the open first stage). For each N, medians of --rounds after one warm-up of:

- the baseline: `GET /kubeclusters:summary?group_by=environment,version,
  support.status` (the summary bench's own row);
- `GET /rollouts/{rollout}` counted (a cluster changed before each, untimed)
  and with nothing changed (its kept counts), the list of rollouts (the
  last look's counts), a page of its clusters, its blocked ones, the Argo
  CD generator's `parameters.rollout`, and one look of the advancer after
  a cluster changed;
- the summary and the counted read side by side, round by round: the
  counted read's CPU over the summary's of the same round (the heap each
  seeding leaves moves both by up to a third from one run to the next);
- the advancer's CPU with the fleet idle: --idle seconds with it running,
  beside as long without, its looks and the counts it made;

with each one's ratio to the baseline, and (a probe greenlet waking every
5 ms: bench/loop_holds.py's) the longest stretch of the loop's CPU any of
them held. Each round's answer is made whole (its body's bytes) inside its
window and read (parsed) after it, and the probe wakes between two rounds.
Appends its table to bench/rollouts.txt.

    .venv/bin/python -m bench.rollouts [--sizes 1000,10000,100000] [--rounds 5] [--idle 30]
"""
from gevent import monkey

monkey.patch_all()

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import gevent  # noqa: E402

from bench import report  # noqa: E402
from bench.filter_cost import revision  # noqa: E402
from bench.loop_holds import PROMISE_MS, Probe  # noqa: E402
from bench.seeding import seeded_app  # noqa: E402
from inventory.core.lifecycle import minor_of  # noqa: E402
from inventory.core.rollouts import standing  # noqa: E402
from inventory.integrations.rollouts import Advancer  # noqa: E402
from inventory.resources.clusters.spec import ROLLOUT_STANDING_FIELD  # noqa: E402

BASELINE = "summary by environment, version, support.status"
COUNTED = "GET /rollouts/wave (a cluster changed: counted)"
SUMMARY = "/kubeclusters:summary?group_by=environment,version,support.status"
IDLE_SECONDS = 30.0  # how long the advancer is watched, the fleet idle (--idle)
STAGES = [{"name": "canary", "filter": 'labels.team="team-0"'},
          {"name": "dev", "filter": 'environment="dev"', "soak": "PT1H"},
          {"name": "staging", "filter": 'environment="staging"', "soak": "P1D"},
          {"name": "production", "filter": 'environment="production" AND labels.team="team-1*"',
           "approval": True},
          {"name": "rest", "filter": ""}]


def measure(n, rounds, idle_seconds=IDLE_SECONDS):
    """{name: (median ms, worst hold CPU ms, what came back)} at N clusters."""
    app, store, client, seeded_in = seeded_app(n)
    # a third of the fleet passing its checks: the generator has ready clusters to answer
    ready = store.clusters.collection
    for doc in ready.find({"environment": "dev"}, {"_id": 1, "version": 1}):
        ready.update_one({"_id": doc["_id"]}, {"$set": {
            "readiness.status": "passing",
            ROLLOUT_STANDING_FIELD: standing(minor_of(doc["version"]), "passing")}})
    # as a served process's start freezes what it read (app._keep_the_start):
    # else a full collection walks every seeded document, in whatever request it falls
    gc.collect()
    gc.freeze()
    made = client.post("/rollouts", json={"name": "wave", "title": "1.29", "target": "1.29",
                                          "stages": STAGES})
    assert made.status_code == 201, made.get_json()
    probe = Probe()
    gevent.sleep(0.2)
    found = {}

    def timed(name, call, what, before=None):
        def once():
            # a wakeup of the probe between two rounds: back-to-back calls
            # from one greenlet, with no I/O between them, run as one chain of
            # the loop's callbacks, which the probe would count as one hold
            gevent.sleep(0.006)
            if before is not None:
                before()  # untimed
            started, cpu = time.perf_counter(), time.thread_time()
            answer = gevent.spawn(call).get()  # (a greenlet: the same thread's CPU)
            return ((time.perf_counter() - started) * 1000, answer,
                    (time.thread_time() - cpu) * 1000)
        once()  # warm up
        began = time.monotonic()
        runs = [once() for _ in range(rounds)]
        gevent.sleep(0.05)
        hold, _ = probe.worst(began, time.monotonic())
        answer = runs[-1][1]
        # the client reads the body after the window: its JSON parse is the
        # bench's own work, not the service's hold (3,333 clusters: ~30 ms)
        found[name] = (statistics.median(ms for ms, _, _ in runs), hold,
                       what(answer.get_json() if hasattr(answer, "get_json") else answer),
                       statistics.median(cpu for _, _, cpu in runs))

    def get(path):
        def call():
            response = client.get(path)
            assert response.status_code == 200, (path, response.get_json())
            response.get_data()  # its body made, as a server sends it (not parsed)
            return response
        return call

    timed(BASELINE, get(SUMMARY),
          lambda body: f"{len(body['groups'])} groups, {body['total']:,} clusters")
    changes = iter(range(10 ** 9))

    def changed():
        """A cluster's change (a label no stage reads): its event moves the
        feed, so the next read or look counts anew."""
        response = client.patch("/kubeclusters/cluster-00001",
                                json={"labels": {"bench": f"b{next(changes)}"}})
        assert response.status_code == 200, response.get_json()

    def staged(body):
        return ", ".join(f"{stage['name']} {stage['state']} {stage['clusters']:,}"
                         for stage in body["status"]["stages"])
    timed(COUNTED, get("/rollouts/wave"), staged, before=changed)
    timed("GET /rollouts/wave (nothing changed: its counts)", get("/rollouts/wave"), staged)
    timed("GET /rollouts (the last look's counts)", get("/rollouts"),
          lambda body: f"{len(body['results'])} rollout")
    timed("a page of its clusters (limit 100)", get("/rollouts/wave/clusters?limit=100"),
          lambda body: f"{len(body['results'])} rows")
    timed("its blocked clusters (a filtered page)",
          get('/rollouts/wave/clusters?limit=100&filter=state%3D%22blocked%22'),
          lambda body: f"{len(body['results'])} rows")

    def generated():
        response = client.post("/integrations/argocd/api/v1/getparams.execute", json={
            "applicationSetName": "upgrade", "input": {"parameters": {"rollout": "wave"}}})
        assert response.status_code == 200, response.get_json()
        response.get_data()
        return response
    timed("Argo CD generator, parameters.rollout", generated,
          lambda body: f"{len(body['output']['parameters']):,} clusters may go")

    def look():
        return store.rollouts.look_due()
    def changed_long_ago():
        """A change, and the last look long enough ago for the next to take it
        (a look takes a change LOOK_SECONDS after the last at the soonest)."""
        changed()
        store.rollouts.collection.update_one({"_id": "wave"}, {"$unset": {"_looked": ""}})
    timed("the advancer's look (a cluster changed)", look, lambda looked: f"{looked} looked at",
          before=changed_long_ago)
    # the two side by side, round by round: a ratio per pair (the heap each
    # seeding leaves moves both by up to a third from run to run)
    summary, counted = get(SUMMARY), get("/rollouts/wave")
    pairs = []
    for _ in range(rounds):
        first = cpu_of(summary)
        changed()
        pairs.append(cpu_of(counted) / first)
    idle = advancer_idle(app, store, probe, idle_seconds)
    probe.running = False
    return found, seeded_in, idle, sorted(pairs)


def cpu_of(call):
    """The CPU ms of `call()`, in a greenlet of its own (the same thread's)."""
    gevent.sleep(0.006)
    began = time.thread_time()
    gevent.spawn(call).get()
    return (time.thread_time() - began) * 1000


def advancer_idle(app, store, probe, seconds=IDLE_SECONDS):
    """(CPU ms a second the advancer's thread adds, its looks, the counts
    made, the longest hold) over `seconds` with nothing changing, beside as
    long with no advancer: the fleet idle, one rollout active."""
    store.rollouts.look_due()  # whatever was pending
    gevent.sleep(0.1)
    began = time.process_time()
    gevent.sleep(seconds)
    quiet = time.process_time() - began
    advancer = Advancer(app)
    counts = getattr(store.rollouts, "counts_made", None)
    advancer.start()
    began, started = time.process_time(), time.monotonic()
    gevent.sleep(seconds)
    busy = time.process_time() - began
    advancer.stop()
    gevent.sleep(0.05)
    hold, _ = probe.worst(started, time.monotonic())
    made = "?" if counts is None else store.rollouts.counts_made - counts
    return (busy - quiet) / seconds * 1000, advancer.passes, made, hold


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--append", action="store_true", default=True)
    parser.add_argument("--idle", type=float, default=IDLE_SECONDS,
                        help="seconds the advancer is watched with the fleet idle")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results, idle, paired = {}, {}, {}
    for n in sizes:
        results[n], seeded, idle[n], paired[n] = measure(n, args.rounds, args.idle)
        print(f"N = {n:,}: seeded in {seeded:.1f} s", file=sys.stderr, flush=True)
        for name, (ms, hold, what, cpu) in results[n].items():
            print(f"  {name:<46}{ms:>9.1f} ms  CPU {cpu:7.1f} ms  hold {hold:5.1f} ms  {what}",
                  file=sys.stderr, flush=True)
    largest = sizes[-1]
    lines = [(f"# python -m bench.rollouts --sizes {args.sizes} --rounds {args.rounds} "
              f"--idle {args.idle:g}  "
              f"({datetime.datetime.now():%Y-%m-%d %H:%M}; nproc "
              f"{len(os.sched_getaffinity(0))}; load average {os.getloadavg()[0]:.1f}, the "
              f"machine shared with other jobs; {revision()})"),
             "In process under gevent, embedded store; median ms; x = ms over the summary's "
             "at the same N; CPU = the median CPU ms at the largest N (what a loaded machine's "
             "other jobs do not add to), cx its ratio to the summary's; hold = the longest CPU "
             "stretch of the loop (ms) at the largest N.",
             f"{'':<46}" + "".join(f"{f'N={n:,}':>11}" for n in sizes)
             + "".join(f"{f'x {n:,}':>9}" for n in sizes)
             + f"{'CPU':>9}{'cx':>6}{'hold':>7}   at the largest N"]
    for name in results[sizes[0]]:
        cells = [results[n][name][0] for n in sizes]
        ratios = [results[n][name][0] / results[n][BASELINE][0] for n in sizes]
        lines.append(f"{name:<46}" + "".join(f"{ms:>11.1f}" for ms in cells)
                     + "".join(f"{ratio:>9.2f}" for ratio in ratios)
                     + f"{results[largest][name][3]:>9.1f}"
                     + f"{results[largest][name][3] / results[largest][BASELINE][3]:>6.2f}"
                     + f"{results[largest][name][1]:>7.1f}   {results[largest][name][2]}")
    # the rollouts' own work (the summary's hold is the baseline's, said in its row)
    worst = max(hold for name, (_, hold, _, _) in results[largest].items() if name != BASELINE)
    for n in sizes:
        cpu, passes, made, hold = idle[n]
        lines.append(f"the advancer, the fleet idle at N = {n:,}: {cpu:.1f} ms CPU a second "
                     f"over {args.idle:.0f} s ({passes} looks, {made} counts), longest "
                     f"hold {hold:.1f} ms")
    worst = max(worst, idle[largest][3])
    read = results[largest][COUNTED][0] / results[largest][BASELINE][0]
    read_cpu = results[largest][COUNTED][3] / results[largest][BASELINE][3]
    for n in sizes:
        lines.append(f"at N = {n:,}, round by round (the summary, a change, the counted "
                     f"read): its CPU over the summary's {statistics.median(paired[n]):.2f}x, "
                     f"{paired[n][0]:.2f}-{paired[n][-1]:.2f}x in {len(paired[n])} rounds")
    verdict = "within" if worst <= PROMISE_MS else "OVER"
    lines.append(f"at N = {largest:,}: reading the rollout (counted) {read:.2f}x the summary "
                 f"({read_cpu:.2f}x in CPU); longest "
                 f"hold of the rollouts' work {worst:.1f} ms ({verdict} the {PROMISE_MS} ms "
                 "promise)")
    report("rollouts", "\n".join(lines) + "\n", args.append)


if __name__ == "__main__":
    main()
