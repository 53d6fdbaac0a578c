"""The store's front (inventory/store/__init__.py): the `Store` it wires."""


def test_signing_key_is_made_once_and_kept(store):
    assert store.signing_key() == store.signing_key()
