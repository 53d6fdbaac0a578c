"""Faults (inventory/embedded/faults.py): each way the segment appended to
stops being what this process wrote is named; a fault refuses writes with
the reason (until a restart when another process took the directory);
the snapshot that ends it is retried after 1, 2, 4 ... up to 30 s."""
import os

import pytest

from inventory.embedded.faults import RETRY_BACKOFF
from tests.support.directory_faults import append_by_another, delete_segment, replace, truncate_in_place
from tests.support.journaled import open_database

pytestmark = pytest.mark.skipif(os.environ.get("MONGODB_URI") is not None,
                                reason="the journal is the embedded store's")


@pytest.mark.parametrize("fault", [truncate_in_place, replace, delete_segment, append_by_another],
                         ids=lambda fault: fault.__name__)
def test_the_segment_appended_to_is_checked_as_this_process_wrote_it(tmp_path, fault):
    db = open_database(tmp_path)
    db.things.insert_one({"_id": 1})
    faults, fd = db.journal.faults, db.journal.appending.fd
    with db.journal.chain.mutex:
        assert faults.in_current(fd) is None
        what = fault(tmp_path)
        assert what in faults.in_current(fd)
        assert what in faults.in_files(fd)
    db.journal.close()


def test_a_fault_refuses_with_its_first_reason(tmp_path, caplog):
    db = open_database(tmp_path)
    faults = db.journal.faults
    assert faults.refusal is None
    faults.fail("the first")
    faults.fail("a second")
    assert "failed (the first); writes are refused until this process has written a full " \
           "snapshot" in faults.refusal
    assert caplog.text.count("failed: the first") == 1 and "a second" not in caplog.text
    faults.unrecoverable(RuntimeError("another process took it"))
    assert "(another process took it); writes are refused until the service restarts" \
        in faults.refusal
    faults.failure = None  # (the close would otherwise write the snapshot first)
    db.journal.close()


def test_the_snapshot_after_a_fault_is_retried_with_a_doubling_backoff(tmp_path, caplog):
    db = open_database(tmp_path)
    faults = db.journal.faults
    waits = []
    for _ in range(7):
        faults.recovering = True
        faults.retry_later("no room")
        assert not faults.recovering
        waits.append(faults.retry_at)
    assert "tries again in 1 s" in caplog.text and "tries again in 16 s" in caplog.text
    assert faults.backoff == RETRY_BACKOFF[1]
    assert waits == sorted(waits)
    faults.ended(db.journal.directory + "/snapshot-000002.bson")
    assert faults.failure is None and faults.backoff == RETRY_BACKOFF[0]
    assert "durable again" in caplog.text
    db.journal.close()
