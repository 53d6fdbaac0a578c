"""Keeping the hub's ClusterProfiles the inventory's: a full reconcile
(every cluster the token sees made a profile, the manager's profiles of
clusters gone deleted), then the change feed followed from the position
read before that list, each page of events applied at once. A position
the feed no longer keeps (410) is a full reconcile again; so is every
`resync` seconds (support's status moves with the calendar, not with an
event). Between reads, profiles whose newest scan has just grown stale are
written again (ControlPlaneHealthy turns Unknown with time, not with an
event).

A profile is written only where it differs from what the hub holds, and
never when another manager holds its name: that is reported, once per
reconcile or change, and left as it is."""
import json
import time
from urllib.parse import unquote

from inventory.clusterprofiles.hub import HubError
from inventory.clusterprofiles.profiles import (
    desired,
    essentials,
    held_parts,
    held_status,
    manager_of,
    new_object,
    object_patch,
    status_to_write,
    valid_profile_name,
)
from inventory.clusterprofiles.source import FeedExpired, SourceError

MAX_BACKOFF = 60.0
# A hub refusal of one profile (a 4xx but these) is that profile's problem:
# said, and the others are written; these say "try again" and stop the pass
# (401: the hub refuses the syncer's credentials, whatever the profile; the
# feed waits for them rather than skipping its changes until a resync).
_TRANSIENT = frozenset({401, 408, 429})


def _transient(error):
    return error.status is None or error.status >= 500 or error.status in _TRANSIENT


class Syncer:
    def __init__(self, inventory, hub, settings, report, say, dry_run=False, clock=time.time):
        self.inventory, self.hub, self.settings = inventory, hub, settings
        self.report, self.say = report, say  # one line to stderr, one line to stdout
        self.dry_run, self.clock = dry_run, clock
        self.providers = {}  # platform name: its control plane's provider
        self.clusters = {}  # name: the cluster as the inventory's API shows it
        self.held = {}  # name: this manager's profile, as the hub holds it
        self.foreign = {}  # name: another manager holding that name
        self.position = None  # the feed position the profiles are in sync with
        self.failures = 0  # the profiles not written since the last reconcile
        self.last_tick = None

    # -- the full reconcile

    def reconcile(self):
        self.failures = 0
        position = self.inventory.newest_event()  # before the list: nothing falls between
        self.providers = self.inventory.providers()
        self.clusters = {cluster["name"]: essentials(cluster)
                         for cluster in self.inventory.clusters()}
        profiles = self.hub.profiles()
        self.held = {name: held_parts(p) for name, p in profiles.items()
                     if manager_of(p) == self.settings.manager}
        self.foreign = {name: manager_of(p) for name, p in profiles.items()
                        if manager_of(p) != self.settings.manager}
        now = self.clock()
        for name in sorted(self.clusters):
            self._apply_one(name, now)
        for name in sorted(set(self.held) - set(self.clusters)):
            self._apply_one(name, now)
        self.position, self.last_tick = position, now

    # -- the feed

    def follow_once(self, wait=None):
        """Read the next page of the feed (waiting for one when there is
        none) and apply it; then write the profiles grown stale."""
        events = self.inventory.events_after(self.position, **({} if wait is None else
                                                               {"wait": wait}))
        changed = set()
        for event in events:
            changed |= self._take(event)
        now = self.clock()
        for name in sorted(changed):
            self._apply_one(name, now, recheck=True)
        if events:
            self.position = events[-1]["id"]
        self.tick(now)
        return len(events)

    def _take(self, event):
        """What `event` changes of what is known: the names to write."""
        kind, subject = event.get("type", ""), event.get("subject", "")
        record = event.get("object") or {}
        parts = [unquote(part) for part in subject.split("/")[1:]]
        if kind in ("kubecluster.created", "kubecluster.updated") and record.get("name"):
            self.clusters[record["name"]] = essentials(record)
            return {record["name"]}
        if kind == "kubecluster.deleted" and record.get("name"):
            self.clusters.pop(record["name"], None)
            return {record["name"]}
        if kind == "kubeclusterscan.created" and len(parts) >= 2 and parts[0] == "kubeclusters":
            return self._take_scan(parts[1], record)
        if kind.startswith("kubeplatform.") and record.get("name"):
            if kind == "kubeplatform.deleted":
                self.providers.pop(record["name"], None)
            else:
                self.providers[record["name"]] = (record.get("control_plane") or {}).get(
                    "provider")
            return {name for name, cluster in self.clusters.items()
                    if cluster.get("platform") == record["name"]}
        return set()

    def _take_scan(self, name, scan):
        """A scan moves what its cluster observed. The inventory says so in
        a `kubecluster.updated` event only when the version or the
        readiness status changes; a scan that observed the same version is
        this event alone, and it makes the cluster's `observed.scanned_on`
        newer (so ControlPlaneHealthy's time): taken from the scan itself,
        as the inventory takes it (its newest scan by `scanned_on` that
        carried `server`: docs/fleet.md), with no read per scan."""
        cluster = self.clusters.get(name)
        version = (scan.get("server") or {}).get("git_version")
        scanned_on = scan.get("scanned_on")
        if cluster is None or not version or not isinstance(scanned_on, int):
            return set()
        observed = cluster.get("observed") or {}
        if observed.get("scanned_on") is not None and observed["scanned_on"] > scanned_on:
            return set()  # posted late: the cluster keeps what it holds
        cluster["observed"] = {"version": version, "scanned_on": scanned_on}
        return {name}

    def tick(self, now):
        """Write again the profiles whose newest scan grew stale since the
        last tick (their ControlPlaneHealthy turns Unknown)."""
        since, stale = self.last_tick, self.settings.stale_after
        self.last_tick = now
        if since is None:
            return
        for name, cluster in sorted(self.clusters.items()):
            observed_on = (cluster.get("observed") or {}).get("scanned_on")
            if observed_on is not None and since - observed_on <= stale < now - observed_on:
                self._apply_one(name, now)

    # -- one profile

    def _apply_one(self, name, now, recheck=False):
        """Make `name`'s profile match its cluster (or go with it); a refusal
        of this profile alone is said and counted, a transient one raised.
        `recheck` (a change from the feed): a name another manager held at
        the last list is read again, as that manager may have let it go."""
        try:
            if recheck and name in self.foreign:
                self._recheck_foreign(name)
            self._apply(name, now)
        except HubError as error:
            if _transient(error):
                raise
            self.failures += 1
            self.report(f"clusterprofile {name}: {error}")

    def _recheck_foreign(self, name):
        found = self.hub.read(name)
        if found is not None and manager_of(found) != self.settings.manager:
            self.foreign[name] = manager_of(found)
            return
        del self.foreign[name]
        if found is not None:  # ours now (spec.clusterManager is immutable: made anew)
            self.held[name] = held_parts(found)

    def _apply(self, name, now, again=True):
        cluster = self.clusters.get(name)
        held = self.held.get(name)
        if cluster is None:
            if held is not None:
                self._write("delete", name, None, lambda: self.hub.delete(
                    name, held["metadata"].get("uid")))
                self.held.pop(name, None)
            return
        if name in self.foreign:
            self.failures += 1
            self.report(f"clusterprofile {name} is held by the cluster manager "
                        f"{self.foreign[name]!r}, not {self.settings.manager!r}: left as it is")
            return
        if not valid_profile_name(name):
            self.failures += 1
            self.report(f"cluster {name!r}: its name cannot name a ClusterProfile "
                        "(a DNS subdomain): not published")
            return
        wanted = desired(cluster, self.providers, self.settings, now)
        if held is None:
            body = new_object(wanted, self.hub.namespace)
            try:
                held = self._write("create", name, body, lambda: self.hub.create(body))
            except HubError as error:
                if error.status != 409 or not again:
                    raise
                # made meanwhile: by this manager (write it as held) or another
                found = self.hub.read(name)
                if found is not None and manager_of(found) != self.settings.manager:
                    self.foreign[name] = manager_of(found)
                elif found is not None:
                    self.held[name] = held_parts(found)
                self._apply(name, now, again=False)
                return
            held = self.held[name] = held_parts(held or body)  # a dry run: what it would hold
        patch = object_patch(wanted, held)
        if patch is not None:
            try:
                written = self._write("update", name, patch, lambda: self.hub.patch(name, patch))
            except HubError as error:
                if error.status != 404 or not again:
                    raise
                self.held.pop(name, None)  # deleted meanwhile: made anew
                self._apply(name, now, again=False)
                return
            held = self.held[name] = held_parts(written or _merged(held, patch))
        status = status_to_write(wanted.status, held_status(held), now)
        if status is not None:
            written = self._write("status", name, status,
                                  lambda: self.hub.patch_status(name, status))
            self.held[name] = held_parts(written or {**held, "status": status})

    def _write(self, action, name, body, call):
        if self.dry_run:
            self.say(json.dumps({"dry_run": action, "name": name, "body": body},
                                sort_keys=True, separators=(",", ":")))
            return None
        written = call()
        self.say(f"{action} clusterprofile {self.hub.namespace}/{name}")
        return written

    # -- the loop

    def run(self, once=False, resync=3600.0, sleep=time.sleep, stop=lambda: False):
        """Reconcile, then follow the feed until `stop()`; with `once`,
        reconcile and return the exit code. Every failure is one line and
        a retry after a backoff (1 s doubling to a minute)."""
        backoff, full_at = 1.0, None
        while not stop():
            try:
                if full_at is None or self.clock() - full_at >= resync:
                    self.reconcile()
                    full_at = self.clock()
                    if once:
                        return 1 if self.failures else 0
                else:
                    self.follow_once()
                backoff = 1.0
            except FeedExpired as error:
                self.report(f"{error}: reconciling everything again")
                full_at = None
            except (SourceError, HubError) as error:
                self.report(str(error) + ("" if once else f" (again in {backoff:.0f} s)"))
                if once:
                    return 1
                sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
            except Exception as error:  # noqa: BLE001 - an answer it could not take
                # A follower that exits on what it could not take would be
                # restarted into the same answer: a crash loop. Said, and the
                # whole estate read again after the backoff.
                self.report(f"internal error: {type(error).__name__}: {_one_line(error)}"
                            + ("" if once else f" (again in {backoff:.0f} s)"))
                if once:
                    return 1
                full_at = None
                sleep(backoff)
                backoff = min(backoff * 2, MAX_BACKOFF)
        return 0


def _one_line(text):
    return " ".join(str(text).split())


def _merged(held, patch):
    merged = json.loads(json.dumps(held))
    labels = merged.setdefault("metadata", {}).setdefault("labels", {})
    for key, value in ((patch.get("metadata") or {}).get("labels") or {}).items():
        if value is None:
            labels.pop(key, None)
        else:
            labels[key] = value
    merged.setdefault("spec", {}).update(patch.get("spec") or {})
    return merged
