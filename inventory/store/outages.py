"""The database's outages, as one process sees them: said once each, while
requests answer 503 and the background work (the sweepers, the webhooks'
deliverer) tries again at its own pace, quietly (docs/reliability.md,
"Database outages")."""
import contextlib
import logging
import threading
import time

from inventory.core.errors import Unavailable

log = logging.getLogger(__name__)


class Outage:
    """Whether the database answers, as this process last found it, said
    once per outage: one line when a call first fails to reach it, one when
    a call first reaches it again. Requests answer 503 meanwhile, and the
    background work (sweepers, the webhooks' deliverer) tries again at its
    own pace without a line per try (`background`)."""

    def __init__(self):
        self._lock = threading.Lock()
        self.since = None  # monotonic time of the failure that began the outage

    def failed(self, error):
        with self._lock:
            began, self.since = self.since is None, self.since or time.monotonic()
        if began:
            log.error("The database cannot be reached (%s): requests answer 503 and background "
                      "work tries again quietly until it answers.", _summary(error))

    def answered(self):
        if self.since is None:  # the usual case: no lock taken
            return
        with self._lock:
            since, self.since = self.since, None
        if since is not None:
            log.warning("The database answers again, after %.0f s away.",
                        time.monotonic() - since)


def _summary(error):
    """pymongo's reason without the topology it appends (a line of its own)."""
    return str(error).split(", Timeout:")[0][:300]


def every(seconds, work, thread, step):
    """In a daemon thread named `thread`, for the process's life: `step()`
    now and every `seconds` after, each pass one `background(work)`."""
    def run():
        while True:
            with background(work):
                step()
            time.sleep(seconds)
    threading.Thread(target=run, name=thread, daemon=True).start()


@contextlib.contextmanager
def background(work):
    """One pass of background `work` (its name, for the log): an away store
    (Unavailable) is left to the Outage's line (or the journal's own) and
    the pass is tried again later, at the caller's pace; anything else is
    logged with its traceback, and tried again too."""
    try:
        yield
    except Unavailable:
        pass
    except Exception:
        log.exception("%s failed; trying again later.", work)
