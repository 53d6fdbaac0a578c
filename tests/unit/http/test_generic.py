"""inventory.http.generic: what the resources' views share (a list's
declaration, a child's parent read in the caller's scope)."""
import pytest
from flask import g
from marshmallow import ValidationError

from inventory.core.errors import NotFound
from inventory.http.auth import Principal
from inventory.http.csv_export import RecordColumns
from inventory.http.generic import RecordList, under
from inventory.resources.platforms.spec import SPEC as PLATFORMS
from schemas.platforms import FILTER_EXAMPLES, KubePlatformListSchema, KubePlatformSchema


def test_a_list_names_its_own_orderings_and_filters_and_writes_its_records_columns():
    listing = RecordList.of("KubePlatformList", KubePlatformListSchema, FILTER_EXAMPLES,
                            PLATFORMS.orderings)
    assert listing.list_args.__name__ == "KubePlatformListArgsSchema"  # the document's name
    args = listing.list_args()
    assert set(args.fields) == {"limit", "continue_", "filter", "order_by", "format_"}
    # its query's document names the spec's orderings and the schema module's filters
    assert args.fields["order_by"].metadata["examples"] == PLATFORMS.orderings.examples()
    assert FILTER_EXAMPLES[0] in str(args.fields["filter"].metadata)
    assert args.load({"order_by": "name desc", "filter": FILTER_EXAMPLES[0]})["filter"]
    with pytest.raises(ValidationError):
        args.load({"limit": "many"})
    # the records' columns as the JSON pages dump them (the envelope's `results`)
    assert listing.columns.plan == RecordColumns(KubePlatformSchema(nested=True)).plan
    assert "organization" in [name for name, _, _ in listing.columns.plan]


@pytest.fixture
def as_caller(app):
    """A request context whose caller is `principal` (what the gate sets
    as `g.principal` after authentication), for code that reads the scope."""
    def enter(organization):
        context = app.test_request_context("/")
        context.push()
        g.principal = Principal("test", "test", "reader", organization)
        return context
    contexts = []
    yield lambda organization: contexts.append(enter(organization))
    for context in reversed(contexts):
        context.pop()


def test_a_child_is_sought_under_its_parent_as_its_children_hold_it(store, inventory, as_caller):
    cluster = inventory.cluster()
    as_caller(None)
    # scans hold their cluster's `k8scl_` id, whether it is named by name or by id
    assert under(store.clusters, store.scans, cluster["name"]) == cluster["id"]
    assert under(store.clusters, store.scans, cluster["id"]) == cluster["id"]


def test_a_parent_the_caller_cannot_see_is_not_found(store, inventory, as_caller):
    cluster = inventory.cluster()
    as_caller(inventory.org()["id"])  # another organization's caller
    with pytest.raises(NotFound):
        under(store.clusters, store.scans, cluster["name"])
    with pytest.raises(NotFound):
        under(store.clusters, store.scans, "no-such-cluster")
