"""gunicorn settings, read from the environment as a PaaS sets it.

Serving model (see inventory/serving.py): threaded workers whose heartbeat
never waits on a request, and a deadline on every connection a thread works
on, so that no client (idle, slow, or sending junk) stalls the others or
gets a worker restarted. In production, put the PaaS router (or nginx) in
front anyway: it buffers whole requests before they reach gunicorn and caps
connections per client, which no single process can do for itself.
"""
import os
import sys

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
worker_class = "inventory.serving.Worker"
# Processes: 1 on the embedded store (enforced below); on MongoDB about one
# per core. Threads per process: how many slow or stalled connections a
# process absorbs while still serving others at once (each is cut after
# inventory.serving's deadlines). Python runs one thread at a time, so more
# threads add tolerance, not throughput.
workers = int(os.environ.get("WEB_CONCURRENCY", "1"))
threads = int(os.environ.get("GUNICORN_THREADS", "16"))
# Connections one process keeps, idle ones included; an idle or kept-alive
# connection waits without a thread and is closed after `keepalive` seconds.
worker_connections = int(os.environ.get("GUNICORN_CONNECTIONS", "1000"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
# With threads, a worker misses its heartbeat only if the process itself
# hangs; requests cannot cause that. Never restart workers on a request
# count: the embedded store lives in the worker.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
max_requests = 0
# Room for every request the API document allows (inventory/serving.py).
limit_request_line = 32768
limit_request_fields = 100
limit_request_field_size = 8190

# The service logs every request itself, as one JSON object per line, with
# its request id and principal; gunicorn's own lines are JSON too.
accesslog = None
logger_class = "inventory.serving.Logger"
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "inventory.observability.JsonFormatter"}},
    "handlers": {"stderr": {"class": "logging.StreamHandler", "formatter": "json",
                            "stream": "ext://sys.stderr"}},
    "root": {"level": os.environ.get("LOG_LEVEL", "INFO"), "handlers": ["stderr"]},
    "loggers": {"gunicorn.error": {"level": "INFO", "handlers": ["stderr"], "propagate": False}},
}


def on_starting(server):
    # The embedded store lives inside one process: several workers would each
    # hold different data and answer at random from one or another.
    if not os.environ.get("MONGODB_URI") and server.cfg.workers > 1:
        sys.stderr.write(
            f"Refusing to start {server.cfg.workers} workers on the embedded in-memory "
            "store: each would hold its own data. Set MONGODB_URI, or run one worker "
            "(WEB_CONCURRENCY=1).\n")
        sys.exit(1)
