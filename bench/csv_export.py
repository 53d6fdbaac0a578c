"""What a list's CSV (`format=csv`) costs against reading the same match as
JSON pages, on the embedded store at 10,000 and 100,000 clusters.

Three ways to read every cluster, in process (Flask test client, no HTTP
server, request log off), on N seeded clusters (bench/seeding.py):

- "JSON pages": GET /kubeclusters?limit=100, following `continue` to the
  end, each page parsed (what a client paging with jq does);
- "CSV": GET /kubeclusters?format=csv, read to its end (the count walk,
  then the streamed rows);
- "CSV: first byte": the same until its first chunk (the count walk: what
  the whole-or-nothing promise costs before the first byte).

Each is the median of --rounds after one warm-up, the three taking turns
within each round (the machine is shared: a burst of load falls on all
three alike), as seconds and rows/s; the ratio is CSV over JSON pages in
the same run. Also a filtered and
ordered export (production clusters by version), the JSON walk's the same.
Appends its table to csv_export.txt.

    .venv/bin/python -m bench.csv_export [--sizes 10000,100000] [--rounds 3]
"""
import argparse
import datetime
import os
import statistics
import sys
import time

from bench.filter_cost import revision
from bench.seeding import seeded_app

QUERIES = {  # name -> query of GET /kubeclusters
    "every cluster": {},
    "production, order_by=version": {"filter": 'environment="production"',
                                     "order_by": "version"},
}


def json_pages(client, query):
    """(seconds, records) of a walk of every page of `query`, limit=100."""
    started, records, token = time.perf_counter(), 0, ""
    while True:
        response = client.get("/kubeclusters", query_string={
            **query, "limit": 100, **({"continue": token} if token else {})})
        assert response.status_code == 200, response.get_data(True)[:400]
        body = response.get_json()
        records += len(body["results"])
        token = body["pagination"]["continue"]
        if not token:
            return time.perf_counter() - started, records


def csv_export(client, query, first_byte_only=False):
    """(seconds, rows) of the CSV of `query` read to its end (or to its first chunk)."""
    started = time.perf_counter()
    response = client.get("/kubeclusters", query_string={**query, "format": "csv"},
                          buffered=False)
    assert response.status_code == 200, response.get_data(True)[:400]
    chunks = iter(response.response)
    lines = next(chunks).count(b"\r\n") - 1  # the header
    if not first_byte_only:
        for chunk in chunks:
            lines += chunk.count(b"\r\n")  # no cell of the seeded estate holds a line end
    response.close()
    return time.perf_counter() - started, lines


def interleaved(runs, rounds):
    """[(median seconds, what the first round counted)] of each of `runs`,
    run in turn within each round (after a warm-up of each), so that a
    burst of load on the shared machine falls on all of them alike."""
    for run in runs:
        run()
    results = [[] for _ in runs]
    for _ in range(rounds):
        for run, found in zip(runs, results):
            found.append(run())
    return [(statistics.median(seconds for seconds, _ in found), found[0][1])
            for found in results]


def measure(n, rounds):
    app, store, client, seeded_in = seeded_app(n)
    found = {}
    for name, query in QUERIES.items():
        (pages, records), (whole, rows), (first, _) = interleaved(
            [lambda: json_pages(client, query), lambda: csv_export(client, query),
             lambda: csv_export(client, query, True)], rounds)
        if rows != records:
            raise SystemExit(f"{name}: {rows} CSV rows, {records} JSON records")
        found[name] = (records, pages, whole, first)
    return found, seeded_in


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__),
                                                      "csv_export.txt"))
    args = parser.parse_args()
    lines = [(f"# python -m bench.csv_export --sizes {args.sizes} --rounds {args.rounds}  "
              f"(today {datetime.date.today()}; nproc {len(os.sched_getaffinity(0))}; "
              f"python {sys.version.split()[0]}; load average {os.getloadavg()[0]:.1f}; "
              f"{revision()})"),
             "In process, embedded store; median seconds (rows/s); CSV / JSON pages in the "
             "same run.",
             f"{'N':>8}  {'query':<30}{'rows':>8}  {'JSON pages':>20}  {'CSV':>20}"
             f"  {'CSV / JSON':>10}  {'CSV: first byte':>16}"]
    for n in [int(size) for size in args.sizes.split(",")]:
        found, seeded = measure(n, args.rounds)
        print(f"N = {n:,}: seeded in {seeded:.1f} s", file=sys.stderr, flush=True)
        for name, (rows, pages, whole, first) in found.items():
            lines.append(f"{n:>8,}  {name:<30}{rows:>8,}  "
                         f"{f'{pages:.2f} s ({rows / pages:,.0f}/s)':>20}  "
                         f"{f'{whole:.2f} s ({rows / whole:,.0f}/s)':>20}  "
                         f"{whole / pages:>10.2f}  {f'{first:.2f} s':>16}")
            print(lines[-1], file=sys.stderr, flush=True)
    print("\n".join(lines))
    with open(args.out, "a") as out:
        out.write("\n".join(lines) + "\n\n")


if __name__ == "__main__":
    main()
