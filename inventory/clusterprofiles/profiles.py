"""What a cluster's ClusterProfile says (no I/O): made from the cluster as
the inventory's API shows it, and compared with the profile the hub holds
so that only what changed is written (docs/clusterprofiles.md, "What it
writes").

A profile has three parts the syncer writes apart: its metadata's labels
and its spec (one merge patch of the object), and its status (one merge
patch of the status subresource, which the object's own writes ignore).
"""
import datetime
import json
import re
from typing import NamedTuple

GROUP, API_VERSION, PLURAL, KIND = "multicluster.x-k8s.io", "v1alpha1", "clusterprofiles", \
    "ClusterProfile"
MANAGER_LABEL = "x-k8s.io/cluster-manager"
# The prefix of the inventory's own labels and properties: environment,
# platform, organization, ... (documented in docs/clusterprofiles.md).
PREFIX = "cluster-inventory.io"
CLUSTERSET_PROPERTY = "cluster.clusterset.k8s.io"  # KEP-2149's name for the cluster's id
CONTROL_PLANE_HEALTHY, UPGRADE_READY = "ControlPlaneHealthy", "UpgradeReady"

_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_PROPERTY_VALUE_MAX = 1024  # the CRD's maxLength of a property's value


def valid_label_key(key):
    """Kubernetes' rule: an optional DNS-subdomain prefix (at most 253) and
    `/`, then a name of at most 63 alphanumerics, `-`, `_`, `.` that starts
    and ends alphanumeric."""
    prefix, _, name = key.rpartition("/")
    if prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        return False
    return bool(_LABEL_NAME.match(name))


def valid_label_value(value):
    return isinstance(value, str) and (value == "" or bool(_LABEL_NAME.match(value)))


def valid_profile_name(name):
    """A ClusterProfile is named as its cluster: a DNS subdomain."""
    return isinstance(name, str) and len(name) <= 253 and bool(_DNS_SUBDOMAIN.match(name))


def valid_namespace(name):
    return isinstance(name, str) and bool(_DNS_LABEL.match(name))


def valid_manager(name):
    """--manager is a label value too (`x-k8s.io/cluster-manager`)."""
    return bool(name) and valid_label_value(name)


def rfc3339(seconds):
    """Seconds since the epoch as the API server writes times: whole
    seconds, UTC, `Z`."""
    return datetime.datetime.fromtimestamp(int(seconds), datetime.UTC).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


class Settings(NamedTuple):
    manager: str = "cluster-inventory"
    access_provider: str = "inventory"
    stale_after: int = 7200  # seconds: --stale-after, PT2H


class Desired(NamedTuple):
    """A profile's three parts as the syncer writes them."""
    name: str
    labels: dict
    spec: dict
    status: dict


def essentials(cluster):
    """What `desired` reads of a cluster record, and nothing more: the
    syncer holds every cluster it publishes in memory, and a record's
    readiness checks alone are most of it."""
    observed = cluster.get("observed") or None
    support = cluster.get("support") or {}
    readiness = cluster.get("readiness") or {}
    return {
        **{field: cluster.get(field) for field in (
            "id", "name", "title", "platform", "organization", "environment", "version",
            "labels", "endpoint")},
        "observed": observed and {"version": observed.get("version"),
                                  "scanned_on": observed.get("scanned_on")},
        "support": {"status": support.get("status"), "ends_on": support.get("ends_on")},
        "readiness": {"status": readiness.get("status"), "target": readiness.get("target")},
    }


def desired(cluster, platforms, settings, now):
    """The profile of `cluster` (a record of GET /kubeclusters), given the
    platforms' providers by name (`platforms`) and the time `now` (seconds):
    `now` decides whether the newest scan is stale."""
    labels = {key: value for key, value in (cluster.get("labels") or {}).items()
              if valid_label_key(key) and valid_label_value(value)
              and key != MANAGER_LABEL and not key.startswith(f"{PREFIX}/")}
    for field in ("environment", "platform", "organization"):
        value = cluster.get(field)
        if value and valid_label_value(value):
            labels[f"{PREFIX}/{field}"] = value
    labels[MANAGER_LABEL] = settings.manager
    spec = {"clusterManager": {"name": settings.manager},
            "displayName": cluster.get("title") or cluster["name"]}
    observed = cluster.get("observed") or {}
    observed_on = observed.get("scanned_on")
    observed_at = rfc3339(observed_on) if observed_on is not None else None
    support = cluster.get("support") or {}
    readiness = cluster.get("readiness") or {}
    properties = [
        (CLUSTERSET_PROPERTY, cluster.get("id"), None),
        (f"{PREFIX}/environment", cluster.get("environment"), None),
        (f"{PREFIX}/platform", cluster.get("platform"), None),
        (f"{PREFIX}/provider", platforms.get(cluster.get("platform")), None),
        (f"{PREFIX}/organization", cluster.get("organization"), None),
        (f"{PREFIX}/version", cluster.get("version"), None),
        (f"{PREFIX}/observed-version", observed.get("version"), observed_at),
        (f"{PREFIX}/support-status", support.get("status"), None),
        (f"{PREFIX}/support-ends-on", support.get("ends_on"), None),
        # readiness is worked out from what the newest scans observed
        (f"{PREFIX}/readiness-status", readiness.get("status"), observed_at),
        (f"{PREFIX}/readiness-target", readiness.get("target"), None),
    ]
    status = {
        "version": {"kubernetes": observed.get("version") or cluster.get("version") or ""},
        "properties": [_property(name, value, at) for name, value, at in properties
                       if isinstance(value, str) and value],
        "conditions": [_control_plane(observed_on, settings.stale_after, now),
                       _upgrade_ready(readiness)],
    }
    if cluster.get("endpoint"):
        status["accessProviders"] = [{"name": settings.access_provider,
                                      "cluster": {"server": cluster["endpoint"]}}]
    else:
        status["accessProviders"] = []
    return Desired(cluster["name"], labels, spec, status)


def _property(name, value, observed_at):
    prop = {"name": name, "value": value[:_PROPERTY_VALUE_MAX]}
    if observed_at is not None:
        prop["lastObservedTime"] = observed_at
    return prop


def _control_plane(observed_on, stale_after, now):
    if observed_on is None:
        return _condition(CONTROL_PLANE_HEALTHY, "Unknown", "NeverScanned",
                          "No scan has observed the cluster's API server yet: run the agent "
                          "(python -m inventory.agent) in the cluster.")
    age = now - observed_on
    if age > stale_after:
        return _condition(CONTROL_PLANE_HEALTHY, "Unknown", "ScanStale",
                          f"The newest scan observed the API server at {rfc3339(observed_on)}, "
                          f"more than {stale_after} s ago.")
    return _condition(CONTROL_PLANE_HEALTHY, "True", "ScanObservedAPIServer",
                      f"The newest scan observed the API server at {rfc3339(observed_on)}.")


_READINESS = {"passing": ("True", "ReadinessPassing"), "warning": ("True", "ReadinessWarning"),
              "error": ("False", "ReadinessError")}


def _upgrade_ready(readiness):
    status = readiness.get("status") or "unknown"
    target = readiness.get("target") or "the next minor"
    verdict, reason = _READINESS.get(status, ("Unknown", "ReadinessUnknown"))
    return _condition(UPGRADE_READY, verdict, reason,
                      f"Upgrade readiness for {target}: {status} (the inventory's checks: "
                      "GET /kubeclusters/<name>).")


def _condition(kind, status, reason, message):
    # lastTransitionTime is set by `status_patch`, from the profile's own
    return {"type": kind, "status": status, "reason": reason, "message": message}


def status_to_write(wanted, held, now):
    """The status to write, or None when the held one already says it:
    each condition keeps its lastTransitionTime while its status holds
    (now's otherwise)."""
    held = held or {}
    held_conditions = {c.get("type"): c for c in held.get("conditions") or []
                       if isinstance(c, dict)}
    conditions = []
    for condition in wanted["conditions"]:
        before = held_conditions.get(condition["type"]) or {}
        since = before.get("lastTransitionTime") if before.get("status") == condition["status"] \
            else None
        conditions.append({**condition, "lastTransitionTime": since or rfc3339(now)})
    status = {**wanted, "conditions": conditions}
    if all(_same(held.get(key), value) for key, value in status.items()):
        return None
    return status


def _same(held, wanted):
    if wanted == [] and held is None:  # an empty list is not kept by the server
        return True
    return held == wanted


def object_patch(wanted, held):
    """The merge patch of a held profile's labels and spec, or None when
    they already match. Every label is the syncer's to write on its own
    profiles: the cluster's labels are its labels."""
    metadata = held.get("metadata") or {}
    labels = metadata.get("labels") or {}
    patch = {}
    label_changes = {key: value for key, value in wanted.labels.items() if labels.get(key) != value}
    label_changes.update({key: None for key in labels if key not in wanted.labels})
    if label_changes:
        patch["metadata"] = {"labels": label_changes}
    spec = held.get("spec") or {}
    if spec.get("displayName") != wanted.spec["displayName"]:
        patch["spec"] = {"displayName": wanted.spec["displayName"]}
    return patch or None


def new_object(wanted, namespace):
    """The body that creates the profile (its status is written next,
    through the status subresource)."""
    return {"apiVersion": f"{GROUP}/{API_VERSION}", "kind": KIND,
            "metadata": {"name": wanted.name, "namespace": namespace, "labels": wanted.labels},
            "spec": wanted.spec}


def held_parts(profile):
    """What the syncer keeps of a profile the hub holds: what it compares
    and the uid its delete is conditional on (not managedFields, most of
    an object as the API server answers it); the status as compact JSON
    text (`held_status` reads it), a third of it as dicts and lists."""
    metadata = profile.get("metadata") or {}
    status = profile.get("status")
    if not isinstance(status, str):
        status = json.dumps(status, separators=(",", ":"))
    return {"metadata": {"name": metadata.get("name"), "uid": metadata.get("uid"),
                         "labels": metadata.get("labels") or {}},
            "spec": profile.get("spec") or {}, "status": status}


def held_status(held):
    """The status of a profile kept by `held_parts` (None for none)."""
    status = held.get("status")
    return json.loads(status) if isinstance(status, str) else status


def manager_of(profile):
    return ((profile.get("spec") or {}).get("clusterManager") or {}).get("name")
