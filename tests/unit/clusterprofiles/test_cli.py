"""The syncer's command line (inventory/clusterprofiles/cli.py): a bad
configuration is one line and exit 2, before anything is read."""
import io

import pytest

from inventory.clusterprofiles.cli import duration, main

ENV = {"INVENTORY_URL": "http://127.0.0.1:9", "INVENTORY_TOKEN": "inv_x", "HOME": "/nonexistent"}


def _run(argv, environ=ENV):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, environ, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("argv, environ, said", [
    ([], ENV, "--namespace"),
    (["--namespace", "Fleet_1"], ENV, "--namespace 'Fleet_1' is not a namespace's name"),
    (["--namespace", "fleet", "--manager", "not a label"], ENV, "--manager"),
    (["--namespace", "fleet", "--stale-after", "2h"], ENV, "not an ISO 8601 duration"),
    (["--namespace", "fleet"], {"HOME": "/nonexistent"}, "INVENTORY_URL and INVENTORY_TOKEN"),
    (["--namespace", "fleet"], {**ENV, "INVENTORY_URL": "ftp://x"}, "http(s) base URL"),
    (["--namespace", "fleet", "--kubeconfig", "/nonexistent/kubeconfig"], ENV, "kubeconfig"),
])
def test_a_bad_configuration_is_one_line_and_exit_2(argv, environ, said):
    code, out, err = _run(argv, environ)
    assert code == 2 and out == ""
    assert said in err and err.startswith("inventory-clusterprofiles: configuration: ")
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("text, seconds", [("PT2H", 7200), ("P1D", 86400), ("PT90S", 90),
                                           ("P1DT1H1M1S", 90061)])
def test_durations_are_iso_8601(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["P", "PT", "PT0S", "2h", "P1Y", "PT1H30", "-PT1H"])
def test_other_durations_are_refused(text):
    with pytest.raises(Exception, match="duration|longer"):
        duration(text)
