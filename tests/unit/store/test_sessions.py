"""The console's sign-in sessions (inventory/store/sessions.py): a session
is stored under its id's SHA-256 digest, never the id; it is found while
live, and refused (and removed) once idle past IDLE or older than LIFETIME
however busy; its last use is written at most once a TOUCH_EVERY; ids of a
shape no session has are refused without a read; sign-out ends one, a
revoke every one of its token, an admin's new secret those of the others."""
import hashlib
from datetime import datetime, timedelta, timezone

import pytest

from inventory.store.sessions import IDLE, LIFETIME, TOUCH_EVERY, SessionStore


class Untimed(SessionStore):
    """The sessions over a collection with no TTL index: what the store
    itself refuses, which the TTL index (the embedded store's expiry, on
    reads) would otherwise remove first."""

    collection_name = "sessions_untimed"


@pytest.fixture
def sessions(store):
    return Untimed(store.db)


def _now():  # naive UTC, to the millisecond, as stored (BSON's precision: MongoDB keeps no more)
    now = datetime.now(timezone.utc).replace(tzinfo=None)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _digest(session_id):
    return hashlib.sha256(session_id.encode()).hexdigest()


def _set(sessions, session_id, **fields):
    """The stored session's dates as if time had passed."""
    sessions.collection.update_one({"_id": _digest(session_id)}, {"$set": fields})


def test_a_session_is_kept_under_its_ids_digest_and_found_by_the_id(sessions):
    session_id, form_token = sessions.start("tok_1")
    assert session_id != form_token
    (stored,) = sessions.collection.find({})
    assert stored["_id"] == _digest(session_id)
    assert session_id not in stored.values()  # a reader of the database learns no usable id
    assert sessions.find(session_id) == {"token": "tok_1", "credential": None,
                                               "form_token": form_token}
    assert sessions.find(_digest(session_id)) is None  # the digest is no id
    assert sessions.start("tok_1")[0] != session_id  # each sign-in its own


def test_the_admins_session_keeps_its_secrets_digest(sessions):
    session_id, _ = sessions.start("admin", credential_digest="d1")
    assert sessions.find(session_id)["credential"] == "d1"


class Unread:
    """A collection that no call may reach."""

    def __getattr__(self, name):
        raise AssertionError(f"read the database: {name}")


@pytest.mark.parametrize("session_id", [None, 42, "", "x" * 19, "x" * 101])
def test_an_id_of_no_sessions_shape_is_refused_without_a_read(sessions, monkeypatch, session_id):
    monkeypatch.setattr(sessions, "collection", Unread())
    assert sessions.find(session_id) is None


def test_a_session_idle_past_idle_is_over_and_removed(sessions):
    session_id, _ = sessions.start("tok_1")
    _set(sessions, session_id, last_seen=_now() - IDLE + timedelta(minutes=1))
    assert sessions.find(session_id) is not None
    _set(sessions, session_id, last_seen=_now() - IDLE - timedelta(seconds=1))
    assert sessions.find(session_id) is None
    assert sessions.collection.count_documents({}) == 0
    assert not sessions.exists(session_id)


def test_a_busy_session_is_over_after_its_lifetime(sessions):
    session_id, _ = sessions.start("tok_1")
    _set(sessions, session_id, started=_now() - LIFETIME - timedelta(seconds=1))  # used just now
    assert sessions.find(session_id) is None
    assert sessions.collection.count_documents({}) == 0


def test_its_last_use_is_written_at_most_once_a_touch_every(sessions):
    session_id, _ = sessions.start("tok_1")
    recent = _now() - TOUCH_EVERY / 2
    _set(sessions, session_id, last_seen=recent)
    sessions.find(session_id)
    assert sessions.collection.find_one({})["last_seen"] == recent  # not written
    older = _now() - TOUCH_EVERY * 2
    _set(sessions, session_id, last_seen=older)
    sessions.find(session_id)
    assert sessions.collection.find_one({})["last_seen"] > recent  # kept alive


def test_exists_reads_without_touching(sessions):
    session_id, _ = sessions.start("tok_1")
    older = _now() - TOUCH_EVERY * 2
    _set(sessions, session_id, last_seen=older)
    assert sessions.exists(session_id)
    assert sessions.collection.find_one({})["last_seen"] == older


def test_sign_out_ends_the_session_at_once_and_ignores_no_id(sessions):
    session_id, _ = sessions.start("tok_1")
    other, _ = sessions.start("tok_1")
    sessions.end(None)
    sessions.end("")
    assert sessions.collection.count_documents({}) == 2
    sessions.end(session_id)
    assert sessions.find(session_id) is None and not sessions.exists(session_id)
    assert sessions.find(other) is not None


def test_a_revoked_token_ends_every_session_of_its_own(sessions):
    mine = [sessions.start("tok_1")[0] for _ in range(2)]
    theirs, _ = sessions.start("tok_2")
    sessions.end_all_of("tok_1")
    assert [sessions.exists(s) for s in mine] == [False, False]
    assert sessions.exists(theirs)


def test_a_new_admin_secret_ends_the_sessions_of_any_other(sessions):
    old, _ = sessions.start("admin", credential_digest="old")
    new, _ = sessions.start("admin", credential_digest="new")
    other, _ = sessions.start("tok_1")
    sessions.end_all_of("admin", unless_credential="new")
    assert not sessions.exists(old)
    assert sessions.exists(new) and sessions.exists(other)
