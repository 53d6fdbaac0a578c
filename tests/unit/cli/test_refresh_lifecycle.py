"""The lifecycle data's refresh (inventory/cli/refresh_lifecycle.py): the
data file rewritten from endoflife.date's four product pages (loose, with
`--commit` and `--date`; a checkout; a bare git directory), minors from
1.19 on in version order, dates or null where not announced; what it does
not understand (a page without front matter, a cycle not a quoted minor or
listed twice, a date that is none, a source that is no checkout) is refused
with one line and nothing written. Moved from tests/api/test_fleet.py,
which keeps the shipped data's checks."""
import datetime
import json
import subprocess
from pathlib import Path

import pytest

from inventory.cli import refresh_lifecycle as lifecycle_refresh
from inventory.cli.refresh_lifecycle import RefreshError, front_matter, minors, read_source
from inventory.core.lifecycle import Lifecycles

SAMPLES = Path(__file__).resolve().parents[2] / "data" / "endoflife"

EXPECTED_SAMPLE = {
    "upstream": {
        "1.19": {"released_on": "2020-08-26", "standard_support_ends_on": "2021-10-28",
                 "extended_support_ends_on": None},
        "1.20": {"released_on": "2020-12-08", "standard_support_ends_on": "2022-02-28",
                 "extended_support_ends_on": None},
        "1.36": {"released_on": "2026-04-22", "standard_support_ends_on": "2027-06-28",
                 "extended_support_ends_on": None}},
    "eks": {
        "1.19": {"released_on": "2021-02-16", "standard_support_ends_on": "2022-08-01",
                 "extended_support_ends_on": None},
        "1.31": {"released_on": "2024-09-26", "standard_support_ends_on": "2025-11-26",
                 "extended_support_ends_on": "2026-11-26"},
        "1.37": {"released_on": "2026-09-01", "standard_support_ends_on": None,
                 "extended_support_ends_on": None}},
    "gke": {"1.33": {"released_on": "2025-06-03", "standard_support_ends_on": "2026-08-03",
                     "extended_support_ends_on": None}},
    "aks": {
        "1.26": {"released_on": "2023-04-18", "standard_support_ends_on": "2024-04-11",
                 "extended_support_ends_on": None},
        "1.29": {"released_on": "2024-03-18", "standard_support_ends_on": "2025-03-31",
                 "extended_support_ends_on": "2026-04-30"}},
}


def test_refresh_rewrites_the_file_from_sample_pages(tmp_path, capsys):
    output = tmp_path / "lifecycle.json"
    code = lifecycle_refresh.main([str(SAMPLES), "--output", str(output),
                                   "--commit", "0" * 40, "--date", "2026-08-22"])
    assert code == 0, capsys.readouterr().err
    written = json.loads(output.read_text("utf-8"))
    assert written["distributions"] == EXPECTED_SAMPLE  # 1.17 dropped, in version order
    assert list(written["distributions"]["upstream"]) == ["1.19", "1.20", "1.36"]
    assert written["source"]["commit"] == "0" * 40 and written["source"]["date"] == "2026-08-22"
    assert written["source"]["pages"]["eks"] == "products/amazon-eks.md"
    # what the service reads: the written file loads, and answers from it
    loaded = Lifecycles.load(output)
    assert loaded.support("eks", "1.31.4", datetime.date(2026, 1, 1))["status"] == "extended"


def test_refresh_reads_a_checkout_and_takes_its_commit_and_date(tmp_path):
    checkout = tmp_path / "endoflife.date"
    (checkout / "products").mkdir(parents=True)
    for page in SAMPLES.iterdir():
        (checkout / "products" / page.name).write_text(page.read_text("utf-8"), "utf-8")
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "pages"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    output = tmp_path / "lifecycle.json"
    assert lifecycle_refresh.main([str(checkout), "--output", str(output)]) == 0
    written = json.loads(output.read_text("utf-8"))
    assert written["source"]["commit"] == commit
    assert written["distributions"] == EXPECTED_SAMPLE
    # a bare git directory (what a mirror is): read from its HEAD
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(checkout), str(bare)], check=True)
    assert lifecycle_refresh.main([str(bare), "--output", str(output)]) == 0
    assert json.loads(output.read_text("utf-8"))["distributions"] == EXPECTED_SAMPLE


@pytest.mark.parametrize("change, message", [
    (('releaseCycle: "1.33"', "releaseCycle: 1.33"), "not a minor version in quotes"),
    (("eol: 2026-08-03", "eol: true"), "not a date"),
    (("releaseDate: 2025-06-03", "releaseDate: soon"), "not a date"),
    (("releases:", "versions:"), "lists no releases"),
])
def test_refresh_refuses_what_it_does_not_understand_and_writes_nothing(tmp_path, capsys,
                                                                        change, message):
    pages = tmp_path / "pages"
    pages.mkdir()
    for page in SAMPLES.iterdir():
        text = page.read_text("utf-8")
        if page.name == "google-kubernetes-engine.md":
            text = text.replace(*change)
        (pages / page.name).write_text(text, "utf-8")
    output = tmp_path / "lifecycle.json"
    code = lifecycle_refresh.main([str(pages), "--output", str(output),
                                   "--commit", "0" * 40, "--date", "2026-08-22"])
    assert code == 1 and message in capsys.readouterr().err
    assert not output.exists()


def test_refresh_of_loose_pages_needs_the_commit_and_date(tmp_path, capsys):
    assert lifecycle_refresh.main([str(SAMPLES), "--output", str(tmp_path / "x.json")]) == 1
    assert "--commit, --date" in capsys.readouterr().err



def _page(*releases):
    return "---\ntitle: Kubernetes\nreleases:\n" + "".join(
        f'-   releaseCycle: "{cycle}"\n    releaseDate: {released}\n    eol: {eol}\n'
        for cycle, released, eol in releases) + "---\n\n> text\n"


def test_a_page_without_front_matter_is_refused():
    with pytest.raises(RefreshError, match="no front matter"):
        front_matter("title: Kubernetes\nreleases: []\n")
    with pytest.raises(RefreshError, match="no front matter"):  # a rule, not its opening
        front_matter("title: Kubernetes\n---\nreleases: []\n")
    assert front_matter("---\n---\n") == {}  # empty front matter: nothing in it


def test_minors_from_1_19_in_version_order_with_dates_or_null():
    page = _page(("1.100", "2030-01-02", "false"), ("1.9", "2017-01-01", "2018-01-01"),
                 ("1.20", "2020-12-08", "2022-02-28"), ("1.19", "2020-08-26", "null"))
    assert list(minors(page, "upstream")) == ["1.19", "1.20", "1.100"]  # as versions sort
    assert minors(page, "upstream") == {
        "1.19": {"released_on": "2020-08-26", "standard_support_ends_on": None,
                 "extended_support_ends_on": None},
        "1.20": {"released_on": "2020-12-08", "standard_support_ends_on": "2022-02-28",
                 "extended_support_ends_on": None},
        "1.100": {"released_on": "2030-01-02", "standard_support_ends_on": None,
                  "extended_support_ends_on": None}}


@pytest.mark.parametrize("page, message", [
    (_page(("1.30", "2024-04-17", "2025-06-28"), ("1.30", "2024-04-17", "2025-06-28")),
     "1.30 is listed twice"),
    (_page(("1.30", "false", "2025-06-28")), "releaseDate is False, not a date"),
    (_page(("1.30", "2024-04-17T10:00:00", "2025-06-28")), "not a date"),
    (_page(("1.30.1", "2024-04-17", "2025-06-28")), "not a minor version in quotes"),
    ("---\nreleases: []\n---\n", "lists no releases"),
])
def test_what_a_page_may_not_hold_is_refused_naming_it(page, message):
    with pytest.raises(RefreshError, match=message):
        minors(page, "upstream")


def test_a_source_that_is_no_checkout_nor_pages_is_refused(tmp_path):
    (tmp_path / "kubernetes.md").write_text(_page(), "utf-8")  # one page of four
    with pytest.raises(RefreshError, match="neither a checkout"):
        read_source(tmp_path)


def test_a_date_that_is_no_day_is_refused_and_nothing_written(tmp_path, capsys):
    output = tmp_path / "lifecycle.json"
    code = lifecycle_refresh.main([str(SAMPLES), "--output", str(output),
                                   "--commit", "0" * 40, "--date", "22/08/2026"])
    assert code == 1 and capsys.readouterr().err.startswith("refresh-lifecycle: ")
    assert not output.exists()
