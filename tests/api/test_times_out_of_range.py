"""Times that leave the calendar: a relative time that overflows (a support
day thousands of years back), an absolute instant whose offset takes it
out of years 1 to 9999 in UTC, a duration past what a filter goes back.
Each is a 422 at the filter's location, wherever a filter is taken: the
lists, their CSV, the fleet's summary and blockers, the feed, Argo CD's
generator and Prometheus' discovery; and on the console's pages (and its
CSV exports) a clear error on the page, never a 500."""
import re
from html import unescape

import pytest

from tests.api.test_console_access import sign_in
from tests.conftest import ADMIN_TOKEN, assert_problem

# (filter, the words its error says): every list with an audit time takes
# the `created_on` ones; the clusters' lists take the support days too
SUPPORT_DAYS = [
    ('support.ends_on<"-P99999W99999D"', "not a day of the calendar"),
    ('support.all_ends_on>="-P99999W99999D"', "not a day of the calendar"),
]
INSTANTS = [
    ('created_on<"0001-01-01T00:00:00+01:00"', "years 1 to 9999"),
    ('created_on>"9999-12-31T23:59:59-00:01"', "years 1 to 9999"),
    ('created_on>"-P9999999W9999999DT999999999H"', "goes back at most"),
]
EVENT_TIMES = [(flt.replace("created_on", "occurred_on"), words) for flt, words in INSTANTS]
GETPARAMS = "/integrations/argocd/api/v1/getparams.execute"


@pytest.fixture
def fleet(inventory):
    """Records on every list, so that a filter is walked, not skipped."""
    inventory.cluster(name="kept")
    return inventory


def _detail(body):
    return " ".join(error.get("message", "") for error in body.get("errors", [])) + \
        body.get("detail", "")


@pytest.mark.parametrize("flt, words", SUPPORT_DAYS + INSTANTS)
@pytest.mark.parametrize("path, extra", [
    ("/kubeclusters", {}),
    ("/kubeclusters", {"format": "csv"}),
    ("/kubeclusters:summary", {"group_by": "environment"}),
    ("/kubeclusters:blockers", {}),
    ("/integrations/prometheus/targets", {}),
])
def test_a_clusters_filter_out_of_the_calendar_is_422_at_the_filter(client, fleet, path, extra,
                                                                     flt, words):
    response = client.get(path, query_string={"filter": flt, **extra})
    body = assert_problem(response, 422, "query.filter")
    assert words in _detail(body), body


@pytest.mark.parametrize("flt, words", SUPPORT_DAYS + INSTANTS)
def test_argocds_filter_out_of_the_calendar_is_422_at_its_parameter(client, fleet, flt, words):
    response = client.post(GETPARAMS, json={"applicationSetName": "fleet",
                                            "input": {"parameters": {"filter": flt}}})
    body = assert_problem(response, 422, "body.input.parameters.filter")
    assert words in _detail(body), body


@pytest.mark.parametrize("flt, words", INSTANTS)
@pytest.mark.parametrize("path", ["/kubeplatforms", "/organizations", "/tokens", "/webhooks"])
def test_every_lists_times_out_of_the_calendar_are_422(client, fleet, path, flt, words):
    for extra in ({}, {"format": "csv"}):
        body = assert_problem(client.get(path, query_string={"filter": flt, **extra}),
                              422, "query.filter")
        assert words in _detail(body), body


@pytest.mark.parametrize("flt, words", EVENT_TIMES)
def test_the_feeds_times_out_of_the_calendar_are_422(client, fleet, flt, words):
    for extra in ({}, {"order_by": "occurred_on desc"}, {"format": "csv"}):
        body = assert_problem(client.get("/events", query_string={"filter": flt, **extra}),
                              422, "query.filter")
        assert words in _detail(body), body


@pytest.mark.parametrize("path, flt, words", [
    *((path, flt, words) for path in ("/ui/clusters", "/ui/clusters.csv")
      for flt, words in SUPPORT_DAYS + INSTANTS),
    *((path, flt, words) for path in ("/ui/platforms", "/ui/organizations",
                                      "/ui/platforms.csv", "/ui/organizations.csv")
      for flt, words in INSTANTS),
    *(("/ui/changes", flt, words) for flt, words in EVENT_TIMES),
])
def test_the_consoles_filter_boxes_show_a_time_out_of_the_calendar_as_an_error(
        app, fleet, path, flt, words):
    console = sign_in(app, ADMIN_TOKEN)
    response = console.get(path, query_string={"filter": flt})
    assert response.status_code == 422
    text = unescape(response.get_data(as_text=True))
    assert words in text
    if not path.endswith(".csv"):
        assert re.search(r'<p class="error" id="filter-error" role="alert">[^<]*' +
                         re.escape(words), text)
