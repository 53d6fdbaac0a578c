"""Turns on the event loop: work that runs long without waiting for
anything (a long walk of the embedded store, an integration's answer of
thousands of clusters) lets others run between its slices, so that under
gevent no request holds the loop for long (the promise: 50 ms)."""
import sys
import time

SLICE_SECONDS = 0.005  # work between two looks that let others run


def let_others_run():
    """Between two slices of long work. Under gevent: wait until the loop
    has nothing else to do (every ready request goes first); with threads: a
    switch."""
    monkey = sys.modules.get("gevent.monkey")
    if monkey is not None and monkey.is_module_patched("threading"):
        import gevent

        gevent.idle()
    else:
        time.sleep(0)


class Turns:
    """The clock of one piece of long work: `.check()` between two units of
    it lets others run once a slice's time is used."""

    def __init__(self, seconds=None):
        self.seconds = SLICE_SECONDS if seconds is None else seconds
        self.ends = time.perf_counter() + self.seconds

    def check(self):
        if time.perf_counter() > self.ends:
            let_others_run()
            self.ends = time.perf_counter() + self.seconds
