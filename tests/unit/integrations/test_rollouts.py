"""The rollouts' advancer (inventory/integrations/rollouts.py), over a
store of its own making: a look asks the store for the due rollouts and
counts its passes; a failing store costs a look, never the loop (an outage
said by the store, anything else logged with its traceback), and the next
look tries again; the loop looks every LOOK_EVERY until stopped; a process
runs it only when it serves (ANNOUNCE). What a look does to the rollouts:
tests/api/test_rollouts.py."""
import logging
import threading
from types import SimpleNamespace

import pytest

from inventory.core.errors import Unavailable
from inventory.integrations import rollouts as advancing
from inventory.integrations.rollouts import Advancer, init_app


class Rollouts:
    """A rollouts' store whose looks answer, or fail, as told."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.looks = 0
        self.looked = threading.Event()  # set at the third look

    def look_due(self):
        self.looks += 1
        if self.looks >= 3:
            self.looked.set()
        answer = self.answers.pop(0) if self.answers else 0
        if isinstance(answer, Exception):
            raise answer
        return answer


def _app(rollouts):
    return SimpleNamespace(extensions={"inventory.store": SimpleNamespace(rollouts=rollouts)})


def _advancer_threads():
    return {thread for thread in threading.enumerate() if thread.name == "rollout-advancer"}


def test_a_look_is_the_stores_look_at_the_due_rollouts():
    advancer = Advancer(_app(Rollouts(2, 0)))
    assert advancer.look() == 2 and advancer.look() == 0
    assert advancer.passes == 2


def test_a_failing_store_costs_a_look_and_the_next_tries_again(caplog):
    rollouts = Rollouts(Unavailable("the database is away"), RuntimeError("a bug"), 1)
    advancer = Advancer(_app(rollouts))
    with caplog.at_level(logging.ERROR):
        assert advancer.look() is None  # an outage: said by the store, not here
        assert caplog.records == []
        assert advancer.look() is None
        (record,) = caplog.records
        assert "A look at the due rollouts failed" in record.getMessage() and record.exc_info
    assert advancer.look() == 1
    assert (advancer.passes, rollouts.looks) == (1, 3)


def test_the_loop_looks_every_look_every_until_stopped(monkeypatch):
    monkeypatch.setattr(advancing, "LOOK_EVERY", 0.0)
    rollouts, before = Rollouts(), _advancer_threads()
    advancer = Advancer(_app(rollouts))
    advancer.start()
    (thread,) = _advancer_threads() - before
    assert rollouts.looked.wait(10)  # it looks again and again
    advancer.stop()
    thread.join(10)
    assert not thread.is_alive()


@pytest.mark.parametrize("serving", [False, True])
def test_a_process_advances_rollouts_only_when_it_serves(serving):
    app, before = _app(Rollouts()), _advancer_threads()
    advancer = init_app(app, SimpleNamespace(ANNOUNCE=serving))
    assert app.extensions["inventory.rollouts"] is advancer
    started = _advancer_threads() - before
    assert len(started) == serving
    advancer.stop()
    for thread in started:
        thread.join(10)
