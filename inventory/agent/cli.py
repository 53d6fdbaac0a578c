"""The command line: `python -m inventory.agent [--dry-run] ...`.

Configuration comes from the environment (`INVENTORY_URL`,
`INVENTORY_TOKEN`, `INVENTORY_CLUSTER`, and `KUBECONFIG` or the pod's
service account); flags override all but the token, which stays out of
the process list. Every failure is one line on stderr, `inventory-agent:
<kind>: <what>`, and the exit code of its kind (`failures`); the line is
made safe to print once more as a whole (`redaction.line`: the tokens the
run holds and a URL's password redacted), whatever a server put in it.
The whole run is bounded by its deadline (`bounds.Clock`).
"""
import argparse
import json
import logging
import os
import sys
import time
from urllib.parse import urlsplit

from inventory.agent import NAME, VERSION, bounds, posting
from inventory.agent.cluster import DEFAULT_PAGE_SIZE, Cluster
from inventory.agent.failures import INTERNAL, ClusterError, ConfigurationError, Failure, InventoryError
from inventory.agent.redaction import line, url_secrets, without_userinfo
from inventory.agent.scan import scan_body

MAX_PAGE_SIZE = 5000


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line and exit 2, as every configuration failure
        raise ConfigurationError(message)


def _parser():
    parser = _Parser(prog="python -m inventory.agent", description=(
        "Scan the cluster (its API server's version, its nodes' versions, the deprecated APIs "
        "it was asked for) and post the scan to the inventory. See docs/agent.md."))
    parser.add_argument("--dry-run", action="store_true",
                        help="print the scan as JSON and post nothing")
    parser.add_argument("--kubeconfig", help="the kubeconfig (default: KUBECONFIG; else the pod's "
                        "service account in a cluster; else ~/.kube/config)")
    parser.add_argument("--context", help="the kubeconfig's context to use (default: its current one)")
    parser.add_argument("--inventory-url", help="the inventory's base URL (default: INVENTORY_URL)")
    parser.add_argument("--cluster", help="the cluster's name in the inventory "
                        "(default: INVENTORY_CLUSTER)")
    parser.add_argument("--page-size", type=int, default=DEFAULT_PAGE_SIZE,
                        help=f"nodes read per request (default {DEFAULT_PAGE_SIZE})")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds each answer may take, whole, from the cluster or the "
                        "inventory (default 30)")
    parser.add_argument("--deadline", type=float, default=None,
                        help="seconds the whole run may take (default: INVENTORY_AGENT_DEADLINE, "
                        f"else {bounds.DEFAULT_DEADLINE:g})")
    parser.add_argument("--version", action="version", version=f"{NAME} {VERSION}")
    return parser


# The environment it reads (docs/agent.md): its own, not the service's settings.
ENVIRONMENT = ("INVENTORY_URL", "INVENTORY_TOKEN", "INVENTORY_CLUSTER", "INVENTORY_AGENT_DEADLINE",
               "KUBECONFIG", "KUBERNETES_SERVICE_HOST")  # the last: in a pod, as the client reads it


def _destination(args, environ):
    """The inventory's URL, the token and the cluster's name, checked
    before the cluster is read (a scan of thousands of nodes is not made
    only to find the token missing)."""
    url = args.inventory_url or environ.get("INVENTORY_URL", "")
    token = environ.get("INVENTORY_TOKEN", "")
    cluster = args.cluster or environ.get("INVENTORY_CLUSTER", "")
    missing = [name for name, value in (("INVENTORY_URL", url), ("INVENTORY_TOKEN", token),
                                        ("INVENTORY_CLUSTER", cluster)) if not value]
    if missing:
        raise ConfigurationError(f"{', '.join(missing)} not set (or use --dry-run to post nothing)")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
        raise ConfigurationError(f"INVENTORY_URL must be the inventory's http(s) base URL, "
                                 f"not {without_userinfo(url)!r}")
    if not token.isascii() or not token.isprintable() or " " in token:
        raise ConfigurationError("INVENTORY_TOKEN must be one token of visible ASCII characters")
    return url, token, cluster


def _deadline(args, environ):
    value = args.deadline
    if value is None:
        text = environ.get("INVENTORY_AGENT_DEADLINE", "")
        try:
            value = float(text) if text else bounds.DEFAULT_DEADLINE
        except ValueError:
            raise ConfigurationError("INVENTORY_AGENT_DEADLINE must be a number of seconds") from None
    if not 0 < value <= bounds.MAX_DEADLINE:
        raise ConfigurationError(f"the deadline (--deadline, INVENTORY_AGENT_DEADLINE) must be "
                                 f"more than 0 and at most {bounds.MAX_DEADLINE:g} seconds")
    return value


def run(argv, environ, stdout, secrets):
    """One run; `secrets` gets what must never be printed, as it is learnt."""
    secrets.extend(filter(None, [environ.get("INVENTORY_TOKEN")]))
    secrets.extend(url_secrets(environ.get("INVENTORY_URL", "")))
    args = _parser().parse_args(argv)
    secrets.extend(url_secrets(args.inventory_url or ""))
    if not 1 <= args.page_size <= MAX_PAGE_SIZE:
        raise ConfigurationError(f"--page-size must be 1 to {MAX_PAGE_SIZE}")
    if not 0 < args.timeout <= 600:
        raise ConfigurationError("--timeout must be more than 0 and at most 600 seconds")
    clock = bounds.Clock(_deadline(args, environ), args.timeout)
    destination = None if args.dry_run else _destination(args, environ)
    clock.start(ClusterError)
    try:
        cluster = Cluster(args.kubeconfig, args.context, environ, args.timeout, clock)
        secrets.append(cluster.credentials)
        try:
            scanned_on = int(time.time())
            body = scan_body(scanned_on, cluster.git_version(), cluster.nodes(args.page_size),
                             cluster.kube_proxy(args.page_size), cluster.deprecated_api_requests())
        finally:
            cluster.close()
        if destination is None:
            print(json.dumps(body, indent=2), file=stdout)
            return 0
        url, token, name = destination
        clock.doing = InventoryError
        recorded = posting.post_scan(url, name, token, body, posting.new_key(),
                                     timeout=args.timeout, clock=clock)
    finally:
        clock.stop()
    print(f"recorded scan {line(recorded.get('id', '?'))} of {name}: {body['nodes']['count']} "
          f"nodes, server {body['server']['git_version']}, "
          f"{len(body['deprecated_api_requests'])} deprecated APIs requested", file=stdout)
    return 0


def main(argv=None, environ=None, stdout=None, stderr=None):
    """Run once; the exit code (0, or the failure's kind's: `failures`)."""
    environ = os.environ if environ is None else environ
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    # The client and urllib3 log what they retry or skip; the one line said
    # at the end is the whole story, so their records go nowhere.
    quiet = logging.NullHandler()
    root = logging.getLogger()
    root.addHandler(quiet)
    secrets = []
    try:
        return run(sys.argv[1:] if argv is None else argv, environ, stdout, secrets)
    except bounds.DeadlineExceeded as exceeded:
        return _say(exceeded.failure, exceeded.failure.kind, secrets, stderr)
    except Failure as failure:
        return _say(failure, failure.kind, secrets, stderr)
    except Exception as error:  # a bug: still one line, and its own exit code
        return _say(error, f"internal error: {type(error).__name__}", secrets, stderr)
    finally:
        root.removeHandler(quiet)


def _say(failure, kind, secrets, stderr):
    held = []
    for secret in secrets:
        held.extend(secret() if callable(secret) else [secret])
    print(f"{NAME}: {kind}: {line(failure, held)}", file=stderr)
    return getattr(failure, "exit_code", INTERNAL)
