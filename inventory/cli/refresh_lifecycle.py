"""Rewrites inventory/core/data/kubernetes-lifecycle.json from the endoflife.date
project's product pages (MIT-licensed: https://github.com/endoflife-date/endoflife.date).

    scripts/refresh-lifecycle PATH [--output FILE] [--commit SHA --date YYYY-MM-DD]

PATH is a checkout of that repository (a work tree, or a bare git
directory: the pages are read from its HEAD), or a folder holding the four
product pages themselves (then give `--commit` and `--date`, which a
checkout supplies). Nothing is fetched: the service never reaches the
network, and neither does this.

The design, and why: docs/design/lifecycle.md"""
import argparse
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

SOURCE_URL = "https://github.com/endoflife-date/endoflife.date"
# distribution -> the product page it is read from
PAGES = {"upstream": "kubernetes.md", "eks": "amazon-eks.md",
         "gke": "google-kubernetes-engine.md", "aks": "azure-kubernetes-service.md"}
OLDEST = (1, 19)  # the oldest minor version kept
OUTPUT = Path(__file__).parent / "data" / "kubernetes-lifecycle.json"
_CYCLE_RE = re.compile(r"^(\d+)\.(\d+)$")


class RefreshError(Exception):
    """The source is not what this refresh understands."""


def front_matter(page_text):
    """The YAML front matter of a product page, parsed."""
    import yaml  # a dev dependency: only this command needs it

    parts = page_text.split("\n---", 1)
    if not page_text.startswith("---") or len(parts) != 2:
        raise RefreshError("the page has no front matter between '---' lines")
    return yaml.safe_load(parts[0][3:]) or {}


def _date(value, field, cycle, optional=True):
    if value is False and optional or value is None and optional:
        return None  # not announced yet, or not offered
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value.isoformat()
    raise RefreshError(f"{cycle}: {field} is {value!r}, not a date")


def minors(page_text, distribution):
    """{"1.31": {released_on, standard_support_ends_on,
    extended_support_ends_on}} of one product page, from 1.19 on."""
    releases = front_matter(page_text).get("releases")
    if not isinstance(releases, list) or not releases:
        raise RefreshError(f"{distribution}: the page lists no releases")
    found = {}
    for release in releases:
        cycle = release.get("releaseCycle") if isinstance(release, dict) else None
        match = _CYCLE_RE.match(cycle) if isinstance(cycle, str) else None
        if match is None:
            raise RefreshError(f"{distribution}: releaseCycle {cycle!r} is not a minor "
                               "version in quotes")
        if (int(match[1]), int(match[2])) < OLDEST:
            continue
        if cycle in found:
            raise RefreshError(f"{distribution}: {cycle} is listed twice")
        found[cycle] = {
            "released_on": _date(release.get("releaseDate"), "releaseDate", cycle,
                                 optional=False),
            "standard_support_ends_on": _date(release.get("eol"), "eol", cycle),
            "extended_support_ends_on": _date(release.get("eoes"), "eoes", cycle),
        }
    return dict(sorted(found.items(), key=lambda item: tuple(map(int, item[0].split(".")))))


def _git(git_dir, *args):
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], check=True,
                          capture_output=True, text=True).stdout


def read_source(path):
    """({distribution: page text}, commit or None, date or None) from PATH."""
    path = Path(path)
    for folder in (path / "products", path):
        if all((folder / page).is_file() for page in PAGES.values()):
            texts = {d: (folder / page).read_text("utf-8") for d, page in PAGES.items()}
            git_dir = path / ".git"
            if git_dir.exists():
                commit, date = _git(git_dir, "log", "-1", "--format=%H %cs").split()
                return texts, commit, date
            return texts, None, None
    try:  # a bare git directory (what the `fetch` tool brings)
        texts = {d: _git(path, "show", f"HEAD:products/{page}") for d, page in PAGES.items()}
        commit, date = _git(path, "log", "-1", "--format=%H %cs").split()
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        raise RefreshError(f"{path} is neither a checkout of endoflife.date nor a folder "
                           f"of its product pages ({', '.join(PAGES.values())})") from error
    return texts, commit, date


def lifecycle_document(texts, commit, date):
    """The data file's content from the four pages' texts."""
    if not commit or not date:
        raise RefreshError("the source's commit and date are needed (--commit, --date)")
    datetime.date.fromisoformat(date)
    return {
        "source": {
            "name": "endoflife.date", "url": SOURCE_URL, "license": "MIT",
            "commit": commit, "date": date,
            "pages": {d: f"products/{page}" for d, page in PAGES.items()},
        },
        "meaning": {
            "released_on": "releaseDate: the distribution made the minor version available",
            "standard_support_ends_on": "eol: standard support ends on this day (upstream: "
                                        "the last patch releases)",
            "extended_support_ends_on": "eoes: extended (EKS) or long-term (AKS) support ends "
                                        "on this day; null where none is offered",
        },
        "distributions": {d: minors(texts[d], d) for d in PAGES},
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a checkout of endoflife.date, or a folder of its "
                                       "product pages")
    parser.add_argument("--output", default=str(OUTPUT))
    parser.add_argument("--commit", help="the source's commit (read from a checkout)")
    parser.add_argument("--date", help="the source's date, YYYY-MM-DD (read from a checkout)")
    args = parser.parse_args(argv)
    try:
        texts, commit, date = read_source(args.source)
        document = lifecycle_document(texts, args.commit or commit, args.date or date)
    except (RefreshError, ValueError) as error:
        print(f"refresh-lifecycle: {error}", file=sys.stderr)
        return 1
    Path(args.output).write_text(json.dumps(document, indent=1) + "\n", "utf-8")
    counts = ", ".join(f"{d} {len(m)}" for d, m in document["distributions"].items())
    print(f"Wrote {args.output}: {counts} minor versions, from {document['source']['commit']}"
          f" ({document['source']['date']}).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
