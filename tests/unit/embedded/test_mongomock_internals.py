"""The mongomock internals the embedded store relies on
(inventory/embedded/mongomock_internals.py)."""
from collections import OrderedDict
from datetime import datetime, timedelta, timezone

import pytest
from bson import Timestamp


@pytest.mark.parametrize("document", [
    {"_id": "a", "at": datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=timezone(timedelta(hours=2))),
     "naive": datetime(2026, 1, 2, 3, 4, 5, 999999), "n": 1, "f": 1.5, "b": True, "none": None},
    {"_id": "b", "nested": {"deep": [{"at": datetime(2026, 5, 1, tzinfo=timezone.utc)}, (1, 2)]},
     "ordered": OrderedDict([("z", 1), ("a", 2)]), "t": (3, [4])},
    {"_id": "c", "when": Timestamp(0, 0), "ts": Timestamp(5, 1), "list": [[], {}, "s"]},
])
def test_a_document_is_stored_as_mongomock_stores_it_and_as_a_copy(document):
    from mongomock_ng import helpers

    from inventory.embedded.mongomock_internals import as_stored
    stored = as_stored(document)
    expected = helpers.patch_datetime_awareness_in_document(document)
    if "when" in document:  # a new timestamp each time: compare the rest
        assert isinstance(stored.pop("when"), Timestamp)
        expected.pop("when")
    assert stored == expected
    assert [type(v) for v in stored.values()] == [type(v) for v in expected.values()]
    for key, value in document.items():  # no object or array is shared
        if isinstance(value, (dict, list)):
            assert stored[key] is not value
