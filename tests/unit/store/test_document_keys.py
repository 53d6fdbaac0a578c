"""The stored form of map keys (inventory.store.document_keys): reversible,
unambiguous, holding no `.` and no leading `$`, and the same as before for
every key the service could store before."""
import string

from hypothesis import given
from hypothesis import strategies as st

from inventory.store.document_keys import (
    api_document,
    api_key,
    api_map,
    stored_document,
    stored_key,
    stored_map,
)

OLD_KEY = st.text(string.ascii_letters + string.digits + "-_", min_size=1, max_size=63)


@given(st.text(max_size=40))
def test_any_key_comes_back_and_is_stored_without_a_dot_or_dollar(key):
    stored = stored_key(key)
    assert api_key(stored) == key
    assert "." not in stored and "$" not in stored


@given(st.text(max_size=20), st.text(max_size=20))
def test_two_keys_never_share_a_stored_form(one, other):
    assert (stored_key(one) == stored_key(other)) == (one == other)


@given(OLD_KEY)
def test_keys_of_old_are_stored_as_they_are(key):
    assert stored_key(key) == key and api_key(key) == key


def test_the_escapes_and_keys_that_look_like_them():
    assert stored_key("app.kubernetes.io/name") == "app%2Ekubernetes%2Eio/name"
    assert stored_key("%2E") == "%252E" and api_key("%252E") == "%2E"
    assert stored_key("$x.%") == "%24x%2E%25"
    assert api_key("a%2") == "a%2" and api_key("%zz") == "%zz"  # not escapes: as they are


def test_maps_and_stored_documents_are_copied_only_when_a_key_changes():
    plain = {"team": "core", "support": {"status": "supported"}, "list": [{"a": 1}]}
    assert stored_map(plain) is plain and api_map(plain) is plain
    assert stored_document(plain) is plain and api_document(plain) == plain
    nested = {"labels": {"a.b": "x", "$c": {"d.e": [{"f.g": 1}]}}, "n": 1}
    stored = stored_document(nested)
    assert stored == {"labels": {"a%2Eb": "x", "%24c": {"d%2Ee": [{"f%2Eg": 1}]}}, "n": 1}
    assert api_document(stored) == nested
    assert api_map(stored_map({"a.b": 1, "c": None})) == {"a.b": 1, "c": None}
