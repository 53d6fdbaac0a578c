"""Every cluster an integration lists: unpaged, whole or not at all, read
and shaped in slices between which others run (thousands of clusters held
the gevent loop 40-130 ms in one go)."""
from inventory.core import filtering
from inventory.core.caps import MAX_INTEGRATION_CLUSTERS
from inventory.core.errors import BadFilter
from inventory.http.auth import current_scope
from inventory.http.dumping import compiled_dump
from inventory.http.errors import RequestError
from inventory.store import get_store
from inventory.store.pages import PageRequest

_PAGE = 100  # read in the store's pages, each a keyed range walk
_SLICE = 100  # clusters shaped and dumped between two looks at the clock


def every_matching_cluster(filter_text, location, turns, listed=None):
    """The clusters the caller may see that match `filter_text` and that
    the answer lists (`listed(cluster)`; None: all), in name order; a 422 at
    `location` for a bad filter or for more such clusters than
    MAX_INTEGRATION_CLUSTERS (never a truncated list). `turns`: the
    request's Turns, checked between pages."""
    try:
        return _every_matching_cluster(filter_text, location, turns, listed)
    except BadFilter as error:  # found when parsed, or when compiled for this resource
        raise RequestError(422, location, error.detail, filter_text) from None


def _every_matching_cluster(filter_text, location, turns, listed):
    tree = filtering.parse(filter_text) if filter_text else None
    clusters, after = [], None
    while True:
        # read as an answer embeds them (a cluster's checks as their stored text)
        page = get_store().clusters.list(PageRequest(_PAGE, tree, after, current_scope(),
                                                     answered=True))
        clusters.extend(page.records if listed is None else filter(listed, page.records))
        if len(clusters) > MAX_INTEGRATION_CLUSTERS:
            raise RequestError(422, location, f"More than {MAX_INTEGRATION_CLUSTERS:,} clusters "
                               "match: narrow the filter (an integration's list is never "
                               "truncated).", filter_text)
        if not page.next_after:
            return clusters
        after = page.next_after
        turns.check()


def dumper(schema):
    """What dumps one answer's item as `schema` does (its compiled plan)."""
    return compiled_dump(schema) or schema.dump


def dumped(clusters, shape, dump, turns):
    """`dump(shape(cluster))` of every cluster, in slices of _SLICE between
    which `turns` is checked: the answer's body, but for its encoding (one
    call to orjson, a few ms for the most clusters an answer may have)."""
    items = []
    for start in range(0, len(clusters), _SLICE):
        items.extend(dump(shape(cluster)) for cluster in clusters[start:start + _SLICE])
        turns.check()
    return items
