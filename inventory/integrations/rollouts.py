"""The rollouts' advancer: each process that serves looks, every
LOOK_EVERY seconds, at the rollouts whose next look is due, so that a
stage's turn comes within seconds of what brings it (a soak that ends, a
stage's last cluster done) while nobody reads the rollout. A rollout is due
when a change was written since its counts (the change feed moved) or a
soak ends: with nothing changed a look reads two documents and counts
nothing (RolloutStore.look_due). Any number of processes may run it: each
look is claimed in the store first, and a stage moves only by a
compare-and-swap on the rollout (RolloutStore)."""
import threading

from inventory.store.outages import background

LOOK_EVERY = 1.0  # seconds between two looks for due rollouts


class Advancer:
    def __init__(self, app):
        self.store = app.extensions["inventory.store"]
        self._stopping = threading.Event()
        self.passes = 0

    def start(self):
        threading.Thread(target=self._run, name="rollout-advancer", daemon=True).start()

    def stop(self):
        self._stopping.set()

    def look(self):
        """One look at the due rollouts: how many were looked at (None: the
        store failed; an outage is said once by the store, anything else
        with its traceback, and the next look tries again)."""
        looked = None
        with background("A look at the due rollouts"):
            looked = self.store.rollouts.look_due()
            self.passes += 1
        return looked

    def _run(self):
        while not self._stopping.wait(LOOK_EVERY):
            self.look()


def init_app(app, config):
    """Advance rollouts from this process when it serves."""
    advancer = Advancer(app)
    app.extensions["inventory.rollouts"] = advancer
    if config.ANNOUNCE:
        advancer.start()
    return advancer
