"""Every cluster an integration lists (inventory/integrations/clusters.py),
called directly in a request's context: the clusters the caller may see,
matching the filter and listed, in name order; a bad filter, or more
clusters than MAX_INTEGRATION_CLUSTERS, is a 422 at the given location,
never a truncated list (those the answer does not list do not count); the
answer's items shaped and dumped in slices, the turns checked between
them. Through HTTP: tests/api/test_integrations.py."""
import contextlib

import pytest
from flask import g

from inventory.core.turns import Turns
from inventory.http.auth import Principal
from inventory.http.errors import RequestError
from inventory.integrations import clusters as integration
from inventory.integrations.clusters import dumped, dumper, every_matching_cluster
from schemas.integrations import ArgoCDClusterParametersSchema
from tests.support.stores import PLATFORM

LOCATION = "body.input.parameters.filter"


class CountedTurns(Turns):
    """The request's clock, counting its checks."""

    def __init__(self):
        super().__init__()
        self.checks = 0

    def check(self):
        self.checks += 1
        super().check()


@pytest.fixture
def estate(store):
    """Two organizations' clusters: {organization: [cluster names]}."""
    names = {}
    for org_title, platform, clusters in [
            ("Acme", "acme-p", [("c-dev", "dev"), ("a-prod", "production"), ("b-dev", "dev")]),
            ("Other", "other-p", [("z-dev", "dev")])]:
        org = store.organizations.create({"title": org_title, "description": ""}, "t")["id"]
        store.platforms.create({"name": platform, "organization": org, **PLATFORM}, "t")
        for name, environment in clusters:
            store.clusters.create({"name": name, "platform": platform, "environment": environment,
                                   "version": "1.30.1", "labels": {}}, "t")
        names[org] = [name for name, _ in clusters]
    return names


@contextlib.contextmanager
def calling_as(app, organization=None):
    """A request's context whose caller is confined to `organization` (None: unscoped)."""
    with app.test_request_context("/"):
        g.principal = Principal("tok_test", "test", "reader", organization)
        yield


def _names(clusters):
    return [cluster["name"] for cluster in clusters]


def test_the_clusters_the_caller_may_see_matching_the_filter_in_name_order(app, estate):
    acme, other = list(estate)
    with calling_as(app):
        assert _names(every_matching_cluster(None, LOCATION, Turns())) == \
            ["a-prod", "b-dev", "c-dev", "z-dev"]
        assert _names(every_matching_cluster('environment="dev"', LOCATION, Turns())) == \
            ["b-dev", "c-dev", "z-dev"]
    with calling_as(app, acme):
        assert _names(every_matching_cluster('environment="dev"', LOCATION, Turns())) == \
            ["b-dev", "c-dev"]
    with calling_as(app, other):
        assert _names(every_matching_cluster("", LOCATION, Turns())) == ["z-dev"]


def test_only_the_clusters_the_answer_lists(app, estate):
    with calling_as(app):
        listed = every_matching_cluster(None, LOCATION, Turns(),
                                        listed=lambda cluster: cluster["name"] < "c")
    assert _names(listed) == ["a-prod", "b-dev"]


@pytest.mark.parametrize("text", ["environment=", 'nope="x"'])
def test_a_bad_filter_is_a_422_at_the_given_location_naming_it(app, estate, text):
    with calling_as(app), pytest.raises(RequestError) as refused:
        every_matching_cluster(text, "query.filter", Turns())
    assert (refused.value.status, refused.value.location, refused.value.value) == \
        (422, "query.filter", text)


def test_more_clusters_than_the_maximum_is_a_422_never_a_truncated_list(app, estate,
                                                                         monkeypatch):
    monkeypatch.setattr(integration, "MAX_INTEGRATION_CLUSTERS", 3)
    with calling_as(app):
        with pytest.raises(RequestError) as refused:
            every_matching_cluster(None, LOCATION, Turns())  # four match
        assert (refused.value.status, refused.value.location) == (422, LOCATION)
        assert "narrow the filter" in refused.value.message
        assert len(every_matching_cluster('environment="dev"', LOCATION, Turns())) == 3
        # those the answer does not list do not count
        assert len(every_matching_cluster(None, LOCATION, Turns(),
                                          listed=lambda cluster: cluster["name"] != "z-dev")) == 3


def test_items_are_shaped_and_dumped_in_slices_between_which_others_run():
    turns = CountedTurns()
    items = dumped(list(range(250)), lambda n: {"n": n}, lambda item: item["n"] * 2, turns)
    assert items == [n * 2 for n in range(250)]
    assert turns.checks == 3  # after each slice of a hundred
    assert dumped([], str, str, turns) == [] and turns.checks == 3


def test_the_dumper_dumps_as_its_schema_does():
    schema = ArgoCDClusterParametersSchema()
    item = {"name": "c1", "id": "k8scl_1", "organization": "org_1", "platform": "p1",
            "environment": "dev", "version": "1.30.1", "minor": "1.30",
            "support_status": "supported", "labels": {"a.b/c": "d"}, "server": None,
            "readiness": {"status": "passing"}}  # not the schema's: left out
    assert dumper(schema)(item) == schema.dump(item)
    assert "readiness" not in dumper(schema)(item)
