"""The command line: `python -m inventory.clusterprofiles --namespace NS
[--once] [--dry-run] ...` (docs/clusterprofiles.md).

The inventory is `INVENTORY_URL` with `INVENTORY_TOKEN` (kept out of the
process list); the hub is --kubeconfig, KUBECONFIG, the pod's service
account or ~/.kube/config. What it writes is one line each on stdout;
every failure one line on stderr, `inventory-clusterprofiles: <what>`,
and (but with --once) a retry after a backoff, never an exit.
"""
import argparse
import logging
import os
import re
import signal
import sys

from inventory.clusterprofiles import NAME, VERSION
from inventory.clusterprofiles.hub import Hub, HubError, configuration
from inventory.clusterprofiles.profiles import Settings, valid_manager, valid_namespace
from inventory.clusterprofiles.source import Inventory
from inventory.clusterprofiles.sync import Syncer

_DURATION = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$")


def duration(text):
    """An ISO 8601 duration in days, hours, minutes and seconds (`PT2H`):
    its seconds."""
    match = _DURATION.match(text or "")
    if not match or text in ("P", "PT") or text.endswith("T"):
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 duration such as PT2H")
    days, hours, minutes, seconds = (int(part or 0) for part in match.groups())
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if total <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be longer than nothing")
    return total


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise SystemExit(f"{NAME}: configuration: {message}")


def _parser():
    parser = _Parser(prog="python -m inventory.clusterprofiles", description=(
        "Publish the inventory's clusters as ClusterProfiles (multicluster.x-k8s.io/v1alpha1) in "
        "a namespace of a hub cluster, and keep them in sync. See docs/clusterprofiles.md."))
    parser.add_argument("--namespace", required=True, help="the hub's namespace of the profiles")
    parser.add_argument("--manager", default="cluster-inventory",
                        help="spec.clusterManager.name and the x-k8s.io/cluster-manager label "
                        "(default cluster-inventory)")
    parser.add_argument("--access-provider", default="inventory",
                        help="status.accessProviders[].name of a cluster's endpoint "
                        "(default inventory)")
    parser.add_argument("--stale-after", type=duration, default="PT2H",
                        help="a newest scan older than this leaves ControlPlaneHealthy Unknown "
                        "(ISO 8601, default PT2H)")
    parser.add_argument("--resync", type=duration, default="PT1H",
                        help="a full reconcile this often besides the feed (default PT1H)")
    parser.add_argument("--once", action="store_true", help="reconcile once and exit")
    parser.add_argument("--dry-run", action="store_true",
                        help="print what it would write (JSON lines) and write nothing")
    parser.add_argument("--kubeconfig", help="the hub's kubeconfig (default: KUBECONFIG; else the "
                        "pod's service account in a cluster; else ~/.kube/config)")
    parser.add_argument("--context", help="the kubeconfig's context (default: its current one)")
    parser.add_argument("--inventory-url", help="the inventory's base URL (default: INVENTORY_URL)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for each answer (default 30)")
    parser.add_argument("--version", action="version", version=f"{NAME} {VERSION}")
    return parser


def main(argv=None, environ=None, stdout=None, stderr=None):
    environ = os.environ if environ is None else environ
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    logging.getLogger().addHandler(logging.NullHandler())  # the one lines say it all

    def report(text):
        print(f"{NAME}: {_one_line(text)}", file=stderr, flush=True)

    def say(text):
        print(text, file=stdout, flush=True)

    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exit_:
        if isinstance(exit_.code, str):
            print(exit_.code, file=stderr)
            return 2
        raise
    problems = []
    if not valid_namespace(args.namespace):
        problems.append(f"--namespace {args.namespace!r} is not a namespace's name")
    if not valid_manager(args.manager):
        problems.append(f"--manager {args.manager!r} must be a label value (63 letters, digits, "
                        "'-', '_', '.')")
    if not args.access_provider:
        problems.append("--access-provider must not be empty")
    if not 0 < args.timeout <= 600:
        problems.append("--timeout must be more than 0 and at most 600 seconds")
    url = args.inventory_url or environ.get("INVENTORY_URL", "")
    token = environ.get("INVENTORY_TOKEN", "")
    if not url or not token:
        problems.append("INVENTORY_URL and INVENTORY_TOKEN must be set")
    if problems:
        report(f"configuration: {'; '.join(problems)}")
        return 2
    try:
        inventory = Inventory(url, token, timeout=args.timeout)
        hub = Hub(configuration(args.kubeconfig, args.context, environ), args.namespace,
                  timeout=args.timeout)
    except (ValueError, HubError) as error:
        report(f"configuration: {error}")
        return 2
    settings = Settings(manager=args.manager, access_provider=args.access_provider,
                        stale_after=args.stale_after)
    syncer = Syncer(inventory, hub, settings, report, say, dry_run=args.dry_run)
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(True) or _stop())
    try:
        return syncer.run(once=args.once, resync=args.resync, stop=lambda: bool(stopping))
    except _Stopped:
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # a bug: one line, then exit for the Deployment to restart
        report(f"internal error: {type(error).__name__}: {error}")
        return 1
    finally:
        inventory.close()
        hub.close()


class _Stopped(BaseException):
    """SIGTERM: as KeyboardInterrupt, not an error the loop retries."""


def _stop():
    raise _Stopped()


def _one_line(text):
    return " ".join(str(text).split())
