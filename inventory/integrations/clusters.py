"""Every cluster an integration lists: unpaged, whole or not at all."""
from inventory.core import filtering
from inventory.core.caps import MAX_INTEGRATION_CLUSTERS
from inventory.core.errors import BadFilter
from inventory.http.auth import current_scope
from inventory.http.errors import RequestError
from inventory.store import get_store
from inventory.store.pages import PageRequest

_PAGE = 100  # read in the store's pages, each a keyed range walk


def every_matching_cluster(filter_text, location):
    """The clusters the caller may see that match `filter_text`, in name
    order; a 422 at `location` for a bad filter or for more matches than
    MAX_INTEGRATION_CLUSTERS (never a truncated list)."""
    try:
        return _every_matching_cluster(filter_text, location)
    except BadFilter as error:  # found when parsed, or when compiled for this resource
        raise RequestError(422, location, error.detail, filter_text) from None


def _every_matching_cluster(filter_text, location):
    tree = filtering.parse(filter_text) if filter_text else None
    clusters, after = [], None
    while True:
        page = get_store().clusters.list(PageRequest(_PAGE, tree, after, current_scope()))
        clusters.extend(page.records)
        if len(clusters) > MAX_INTEGRATION_CLUSTERS:
            raise RequestError(422, location, f"More than {MAX_INTEGRATION_CLUSTERS:,} clusters "
                               "match: narrow the filter (an integration's list is never "
                               "truncated).", filter_text)
        if not page.next_after:
            return clusters
        after = page.next_after
