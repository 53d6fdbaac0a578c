"""The estates of the benches that start from a large store: seeded once
by `flask --app app seed` into a folder kept between runs (minutes at the
envelope), and copied for each run, which writes to its copy only."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def add_arguments(parser, estate, clusters):
    """The options that name and size an estate, with this bench's defaults."""
    parser.add_argument("--estate", default=estate,
                        help="the seeded data dir, kept between runs (seeded when missing)")
    parser.add_argument("--clusters", type=int, default=clusters)
    parser.add_argument("--scans-per-cluster", type=int, default=10)
    parser.add_argument("--organizations", type=int, default=10)


def copied(args, prefix):
    """(work folder, a data dir in it): a copy of `args.estate`, seeded first
    when missing, without its lock or a compaction's leftovers."""
    if not os.path.isdir(args.estate):
        print(f"seeding {args.estate} ...", file=sys.stderr)
        subprocess.run([os.path.join(ROOT, ".venv/bin/flask"), "--app", "app", "seed",
                        "--clusters", str(args.clusters), "--scans-per-cluster",
                        str(args.scans_per_cluster), "--organizations", str(args.organizations)],
                       cwd=ROOT, env={**os.environ, "INVENTORY_DATA_DIR": args.estate},
                       check=True)
    work = tempfile.mkdtemp(prefix=prefix)
    data = os.path.join(work, "data")
    shutil.copytree(args.estate, data, ignore=shutil.ignore_patterns("lock", "*.tmp"))
    return work, data
