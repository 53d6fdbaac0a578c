"""What the costliest legal filter costs a list page on the embedded store.

The requirement: on the embedded store (mongomock), the costliest legal filter
at 10,000 clusters answers a page within 0.5 s on the 2-core machine. A filter
is evaluated document by document, and a filtered page examines at most
MAX_EXAMINED (1,000) records, so the worst case is a filter that matches
nothing, with as much for the matcher to do per record as the parser allows
(MAX_TERMS comparisons and NOTs in all, 2,000 characters, 32 levels): it runs
against the whole window. Negated prefixes (`name!="c*"`) are the dearest
comparison: mongomock evaluates `$not` by running its whole matcher again.

In-process (Flask test client, no HTTP server, request log off), on N seeded
clusters, it times GET /kubeclusters?filter=...&limit=100 for each candidate:
the first page and a page 90% deep (reached by following `continue`);
medians of --rounds, after one warm-up. Appends its table to filter_cost.txt.

    .venv/bin/python -m bench.filter_cost [--n 10000] [--rounds 7] [--only TEXT]
"""
import argparse
import datetime
import logging
import os
import statistics
import subprocess
import sys
import time
import uuid
from urllib.parse import urlencode

from app import create_app
from bench.seeding import seed
from inventory.config import Config
from inventory.core.filtering import MAX_TERMS


def ors(parts):
    return " OR ".join(parts)


def nested(comparisons, levels, every):
    """`(c1 OR NOT (c2 OR (c3 OR NOT (... (... OR cK)))))`: `levels` levels, a
    NOT at every `every`-th. The NOTs are even in number: with every
    comparison false, the whole is false and is evaluated to the bottom."""
    inner = "(" + ors(comparisons[levels:]) + ")"
    for i, comparison in enumerate(reversed(comparisons[:levels])):
        inner = f"({comparison} OR {'NOT ' if i % every == every - 1 else ''}{inner})"
    return inner


K = MAX_TERMS  # comparisons and NOTs a filter may have in all
CANDIDATES = {  # name -> a legal filter; names say which match anything
    "no filter (baseline)": "",
    "1 comparison: environment=": 'environment="nope"',
    f"1 comparison under {K - 2} NOTs": "NOT " * (K - 2) + '(environment="nope")',
    f"{K} OR id= (uuids)": ors(f'id="k8scl_{uuid.uuid4()}"' for _ in range(K)),
    f"{K} OR name= prefix": ors(f'name="x{i:02d}*"' for i in range(K)),
    f"{K // 2} AND NOT labels.kN (all match)": " AND ".join(
        f'NOT labels.k{i}:"v"' for i in range(K // 2)),
    f"{K - 1} AND labels.team!=, then false": " AND ".join(
        [f'labels.team!="t{i}"' for i in range(K - 1)] + ['environment="nope"']),
    f"{K} OR labels:kN (exists)": ors(f"labels:k{i}" for i in range(K)),
    f"{K} OR version<": ors(f'version<"0.{i}"' for i in range(K)),
    f"{K} OR timestamps, mixed": ors(
        f'created_on>"2{100 + i}-01-01T00:00:00Z"' if i % 2 else
        f'last_modified_on<"19{i + 10}-01-01T00:00:00+02:00"' for i in range(K)),
    f"{K} OR last_scanned_on>": ors(f"last_scanned_on>{4_000_000_000 + i}" for i in range(K)),
    f"{K - 2} nested, 2 NOT": nested([f'title="t{i}"' for i in range(K - 2)], K - 4, 6),
    f"{K} OR name!= prefix": ors('name!="cluster-*"' for _ in range(K)),
    f"{K} OR labels.team!= prefix": ors('labels.team!="team-*"' for _ in range(K)),
    f"{K} OR created_on!= prefix": ors('created_on!="2*"' for _ in range(K)),
    f"{K // 2} OR NOT name!= prefix": ors('NOT name!="c*"' for _ in range(K // 2)),
    # each compiles into version ranges per distribution (several clauses)
    f"{K} OR support.status=unknown": ors('support.status="unknown"' for _ in range(K)),
    f"{K} OR support.status!=, then false": ors(
        f'(support.status!="{s}" AND environment="nope")' for s in
        ("supported", "ending", "extended", "unsupported") * (K // 8)),
}


def get(client, text, token=None):
    """(ms, results, continue) of one page; any answer but 200 stops the bench."""
    query = {"limit": 100, **({"filter": text} if text else {}),
             **({"continue": token} if token else {})}
    started = time.perf_counter()
    response = client.get(f"/kubeclusters?{urlencode(query)}",
                          headers={"Authorization": "Bearer bench"})
    elapsed = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise SystemExit(f"{text[:60]!r}: {response.status_code} {response.get_data(True)[:400]}")
    body = response.get_json()
    return elapsed, len(body["results"]), body["pagination"]["continue"]


def deep_page(app, client, text, n, fraction=0.9):
    """(continue token, % of keys before it) of the first page that starts
    `fraction` deep, or of the deepest page if they end sooner; None if the
    first page is the only one (one window held the whole estate)."""
    target, token, deepest = f"cluster-{int(n * fraction) - 1:05d}", None, None
    while token := get(client, text, token)[2]:
        with app.app_context():  # the key the token continues after
            after = app.extensions["inventory.tokens"]._signer().loads(token)[2]
        deepest = token, (int(after.rsplit("-", 1)[1]) + 1) * 100 // n
        if after >= target:
            break
    return deepest


def measure(app, client, text, n, rounds):
    """Per page (first, then a deep one if any): start %, median ms, results, more."""
    deep = deep_page(app, client, text, n)
    cells = []
    for token, depth in [(None, 0)] + ([deep] if deep else []):
        get(client, text, token)  # warm up
        samples = [get(client, text, token) for _ in range(rounds)]
        cells.append((depth, statistics.median(s[0] for s in samples), *samples[-1][1:]))
    return cells


def revision():
    """The commit measured, and whether the service's code differed from it."""
    def git(*args):
        return subprocess.run(["git", *args], capture_output=True, text=True, check=False).stdout.strip()
    dirty = git("status", "--porcelain", "--", "app.py", "inventory", "schemas")
    return f"at {git('rev-parse', '--short', 'HEAD')}" + (" + uncommitted changes" if dirty else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default="", help="only the candidates whose name has this")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "filter_cost.txt"))
    args = parser.parse_args()
    app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN="bench"))
    logging.getLogger("inventory").setLevel(logging.WARNING)  # no log line per request
    started = time.monotonic()
    seed(app.extensions["inventory.store"], args.n)
    seeded_in, client = time.monotonic() - started, app.test_client()
    lines = [(f"# python -m bench.filter_cost --n {args.n} --rounds {args.rounds}  "
              f"({datetime.date.today()}; nproc {len(os.sched_getaffinity(0))}; "
              f"python {sys.version.split()[0]}; {revision()})"),
             (f"N = {args.n} clusters (seeded in {seeded_in:.1f} s); GET /kubeclusters?limit=100; "
              f"median ms of {args.rounds}; n = results; more = continue was non-empty"),
             (f"{'filter (matches nothing unless said)':<36}{'chars':>6}"
              f"{'first page: ms':>15}{'n':>5}{'more':>5}{'deep page at':>14}{'ms':>8}{'n':>5}"
              f"{'more':>5}")]
    print("\n".join(lines), flush=True)
    worst = (0, None)
    for name, text in CANDIDATES.items():
        if args.only in name:
            cells = measure(app, client, text, args.n, args.rounds)
            lines.append(f"{name:<36}{len(text):>6}" + "".join(
                (f"{depth:>13}%" if depth else "") + f"{ms:>{8 if depth else 15}.1f}"
                f"{results:>5}{'yes' if more else 'no':>5}" for depth, ms, results, more in cells)
                + ("" if len(cells) == 2 else "   (no deep page: one covers all N)"))
            print(lines[-1], flush=True)
            worst = max(worst, (max(cell[1] for cell in cells), name))
    lines.append(f"costliest: {worst[1]}, {worst[0]:.1f} ms: "
                 f"{'within' if worst[0] <= 500 else 'OVER'} the 500 ms budget")
    print(lines[-1])
    with open(args.out, "a") as out:
        out.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
