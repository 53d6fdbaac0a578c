"""The connection to MongoDB (inventory/store/connection.py): a guarded
collection answers a name it lacks with an error, not pymongo's sub-collection."""
import pytest

from tests.conftest import REAL_MONGO


@pytest.mark.skipif(not REAL_MONGO, reason="pymongo's collections (MONGODB_URI)")
def test_a_name_a_collection_lacks_is_an_error_not_a_sub_collection(store):
    """pymongo answers any attribute a collection lacks with a sub-collection:
    `shown` once read `<name>.uncopied` there, and every get answered 404."""
    with pytest.raises(AttributeError, match="uncopied"):
        store.clusters.collection.uncopied  # noqa: B018
    assert store.db.settings.name == "settings"  # a database's, by attribute, stay
    assert store.clusters.collection.name == "clusters"
