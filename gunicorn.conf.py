"""gunicorn settings, read from the environment as a PaaS sets it.

Serving model (see inventory/server/worker.py): gevent workers, where a waiting
connection costs a greenlet rather than a thread, with a deadline on every
read and write, so that no client (idle, slow, or sending junk) stalls the
others or gets a worker restarted. In production, put the PaaS router (or
nginx) in front anyway: it caps connections per client, which no single
process can do for itself.
"""
import os
import sys

from inventory.config import Config
from inventory.core import caps as limits

settings = Config()  # the environment, read as the app reads it (inventory/config.py)

bind = f"0.0.0.0:{settings.PORT}"
worker_class = "inventory.server.worker.Worker"
# Processes: 1 on the embedded store (enforced below); on MongoDB about one
# per core (an event loop uses one core).
workers = settings.WEB_CONCURRENCY
# Connections one process holds at once, idle ones and watchers included
# (fewer if the open-files limit leaves no room); past it, a 503.
worker_connections = settings.GUNICORN_CONNECTIONS
# Seconds a connection may wait for its next request's first byte.
keepalive = settings.GUNICORN_KEEPALIVE
# A worker misses its heartbeat only if its loop is held that long. Never
# restart workers on a request count: the embedded store lives in the worker.
timeout = settings.GUNICORN_TIMEOUT
max_requests = 0
# Files are answered through the same deadline-bound writes as any body.
sendfile = False
# gunicorn 27's control socket is one fixed path per user: every instance on
# the machine would share it.
control_socket_disable = True
# Room for every request the API document allows (inventory/server/worker.py).
limit_request_line = limits.REQUEST_LINE_BYTES
limit_request_fields = limits.REQUEST_HEADER_FIELDS
limit_request_field_size = limits.REQUEST_HEADER_FIELD_BYTES

# The service logs every request itself, as one JSON object per line, with
# its request id and principal; gunicorn's own lines are JSON too.
accesslog = None
logger_class = "inventory.server.worker.Logger"
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "inventory.http.observability.JsonFormatter"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json",
                            "stream": "ext://sys.stderr"}},
    "root": {"level": settings.LOG_LEVEL, "handlers": ["stderr"]},
    "loggers": {"gunicorn.error": {"level": "INFO", "handlers": ["stderr"], "propagate": False}},
}


def on_starting(server):
    # prometheus_client's multiprocess mode (several workers answer /metrics
    # together): its folder must exist and hold nothing of an earlier run.
    metrics = settings.PROMETHEUS_MULTIPROC_DIR
    if metrics:
        os.makedirs(metrics, exist_ok=True)
        for name in os.listdir(metrics):
            if name.endswith(".db"):
                os.remove(os.path.join(metrics, name))

    # The embedded store lives inside one process: several workers would each
    # hold different data and answer at random from one or another.
    if settings.embedded and server.cfg.workers > 1:
        sys.stderr.write(
            f"Refusing to start {server.cfg.workers} workers on the embedded in-memory "
            "store: each would hold its own data. Set MONGODB_URI, or run one worker "
            "(WEB_CONCURRENCY=1).\n")
        sys.exit(1)


def nworkers_changed(server, new_value, old_value):
    # At run time too, the embedded store stays in one process: a worker
    # added (kill -TTIN, gunicorn's way; a reload with more configured)
    # would wait for the data directory's lock, fail to boot and stop the
    # whole service, or, in memory only, answer from data of its own. It is
    # not added, and the log says so (old_value None: the start, checked in
    # on_starting). A worker that dies is still replaced: that adds none.
    if settings.embedded and old_value is not None and new_value > 1:
        server.log.warning(
            "Not adding a worker (asked for %d): the embedded store lives in one process, "
            "so one worker serves it. Set MONGODB_URI to serve from several.", new_value)
        server.cfg.set("workers", 1)  # what a reload spawns
        server.num_workers = 1  # calls this again, with 1: nothing more to do


def when_ready(server):
    # gunicorn logs the address it binds (0.0.0.0, every interface), which a
    # browser cannot open: say where the service answers from this machine.
    host, _, port = bind.rpartition(":")
    if host in ("0.0.0.0", "[::]", ""):
        host = "127.0.0.1"
    base = f"http://{host}:{port}"
    server.log.info("Serving on %s: try %s/healthz; the API's docs are at %s/docs", base, base,
                    base)


def child_exit(server, worker):
    # A dead worker's live gauges leave /metrics (prometheus_client multiprocess).
    if settings.PROMETHEUS_MULTIPROC_DIR:
        from prometheus_client import multiprocess
        multiprocess.mark_process_dead(worker.pid)
