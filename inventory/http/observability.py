"""Request ids, one-JSON-object-per-line logs, and Prometheus metrics."""
import json
import logging
import re
import sys
import time
import uuid

from flask import Response, current_app, g
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)

log = logging.getLogger("inventory.requests")

# An incoming X-Request-ID is echoed when it looks like an id (a proxy's or a
# client's); anything else is replaced, so logs cannot be forged through it.
_REQUEST_ID_RE = re.compile(r"^[A-Za-z0-9._:~-]{1,128}$")
_UUID_RE = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")

KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# One set of metrics per process: every app instance of the process shares them.
REQUESTS = Counter("inventory_requests_total", "HTTP requests answered.",
                   ["method", "route", "status"])
LATENCY = Histogram("inventory_request_duration_seconds", "Time to answer a request.",
                    ["method", "route"],
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and extras."""

    FIELDS = ("request_id", "method", "path", "route", "status", "duration_ms", "principal")
    # one encoder for every line: json.dumps(..., default=str) would build a
    # new one each time, a third of a line's cost
    _encode = json.JSONEncoder(default=str).encode

    def format(self, record):
        entry = {"time": _timestamp(record.created, record.msecs),
                 "level": record.levelname.lower(), "logger": record.name,
                 "message": record.getMessage()}
        entry.update((k, getattr(record, k)) for k in self.FIELDS if hasattr(record, k))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return self._encode(entry)


_stamp = (None, "")  # (a second, its text): one tuple, so threads never mix them


def _timestamp(created, msecs):
    """A record's time as the lines write it (strftime once a second, not once a line)."""
    global _stamp
    second, text = _stamp
    if second != int(created):
        second = int(created)
        text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
        _stamp = (second, text)
    return f"{text}.{int(msecs):03d}Z"


_quote = json.encoder.encode_basestring_ascii  # what JsonFormatter's encoder writes a str as


def access_line(created, method, path, status, request_id_value, route, duration_ms,
                principal):
    """The access line exactly as JsonFormatter writes the record of
    `log.info("%s %s %s", method, path, status, extra={...})`."""
    return (f'{{"time": "{_timestamp(created, (created - int(created)) * 1000)}", '
            f'"level": "info", "logger": "{log.name}", '
            f'"message": {_quote(f"{method} {path} {status}")}, '
            f'"request_id": {_quote(request_id_value)}, "method": {_quote(method)}, '
            f'"path": {_quote(path)}, "route": {_quote(route)}, "status": {status}, '
            f'"duration_ms": {float(duration_ms)!r}, '
            f'"principal": {"null" if principal is None else _quote(principal)}}}')


def _plain_json_handlers():
    """The handlers an access line reaches, when every one is a plain
    StreamHandler with the JsonFormatter and nothing filters on the way (as
    the service configures logging): the line is then written to them
    directly, as they would write it, without a LogRecord and the logging
    machinery (a tenth of a single-record request). Else None."""
    logger, handlers = log, []
    while logger is not None:
        if logger.filters:
            return None
        for handler in logger.handlers:
            if type(handler) is not logging.StreamHandler or handler.filters \
                    or type(handler.formatter) is not JsonFormatter \
                    or handler.level > logging.INFO:
                return None
            handlers.append(handler)
        if not logger.propagate:
            break
        logger = logger.parent
    return handlers or None


def configure_logging(level="INFO"):
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)


def request_id():
    return g.get("request_id", "unknown")


def instance_uri(request_id_value):
    if _UUID_RE.match(request_id_value):
        return f"urn:uuid:{request_id_value}"
    return f"urn:x-request-id:{request_id_value}"


def start_request(passage):
    """The gate's first way in (inventory.http.gate)."""
    incoming = passage.request.headers.get("X-Request-ID", "")
    g.request_id = passage.request_id = \
        incoming if _REQUEST_ID_RE.match(incoming) else str(uuid.uuid4())
    passage.started = time.perf_counter()


_SERIES = {}  # (method, route, status) -> its two series: finite, as the label sets are


def _series(method, route, status):
    """The request counter and latency histogram of these labels, looked
    up once (prometheus_client's `labels()` takes a lock each time)."""
    found = _SERIES.get((method, route, status))
    if found is None:
        found = _SERIES[(method, route, status)] = (
            REQUESTS.labels(method, route, str(status)), LATENCY.labels(method, route))
    return found


def finish_request(passage, response):
    """The gate's last way out: the request id, the metrics, the access line."""
    current = passage.request
    # (a request the gate let in has an id; one failed before, as errors.py names it)
    request_id_value = passage.request_id or request_id()
    response.headers["X-Request-ID"] = request_id_value
    duration = time.perf_counter() - (passage.started or time.perf_counter())
    route = current.url_rule.rule if current.url_rule is not None else "unmatched"
    # Label values come from fixed sets only: any method name a client makes
    # up would otherwise be a new time series, kept for the process's life.
    method = current.method if current.method in KNOWN_METHODS else "other"
    counter, histogram = _series(method, route, response.status_code)
    counter.inc()
    histogram.observe(duration)
    principal = passage.principal.name if passage.principal is not None else None
    if not log.isEnabledFor(logging.INFO):
        return response
    handlers = _plain_json_handlers()
    if handlers is None:
        log.info("%s %s %s", current.method, current.path, response.status_code, extra={
            "request_id": request_id_value, "method": current.method, "path": current.path,
            "route": route, "status": response.status_code,
            "duration_ms": round(duration * 1000, 3), "principal": principal})
        return response
    line = access_line(time.time(), current.method, current.path, response.status_code,
                       request_id_value, route, round(duration * 1000, 3), principal)
    for handler in handlers:
        handler.acquire()
        try:
            handler.stream.write(line + handler.terminator)
            handler.flush()
        except Exception:  # noqa: BLE001 - as logging does: a log line never fails a request
            pass
        finally:
            handler.release()
    return response


METRICS_CONTENT_TYPE = CONTENT_TYPE_LATEST


def metrics_response():
    """The Prometheus exposition; across gunicorn workers when
    PROMETHEUS_MULTIPROC_DIR is set (prometheus_client's multiprocess mode)."""
    registry = REGISTRY
    if current_app.config["PROMETHEUS_MULTIPROC_DIR"]:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    return Response(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)
