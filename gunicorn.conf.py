"""gunicorn settings, read from the environment as a PaaS sets it."""
import os
import sys

bind = f"0.0.0.0:{os.environ.get('PORT', '8000')}"
workers = int(os.environ.get("WEB_CONCURRENCY", "1"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))
# The service logs every request itself, as one JSON object per line, with
# its request id and principal; gunicorn's own lines are JSON too.
accesslog = None
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
