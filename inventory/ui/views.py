"""The console's pages (docs/console.md). Each reads what one API operation
reads, through the same store calls with the caller's scope."""
import hmac
import secrets
import threading
import time
from functools import partial

from flask import current_app, g, redirect, request, url_for
from marshmallow import ValidationError
from werkzeug.exceptions import NotFound

import schemas.clusters
import schemas.tokens
import schemas.webhooks
from inventory import resources
from inventory.core import grouping
from inventory.core.errors import InvalidField, StaleRevision
from inventory.core.ids import now_rfc3339
from inventory.core.lifecycle import STATUSES
from inventory.core.readiness import STATUSES as READINESS_STATUSES
from inventory.core.versions import version_parts
from inventory.http import auth, rate_limits
from inventory.http.auth import SESSION_COOKIE, current_scope
from inventory.http.lists import page_request
from inventory.resources.clusters import views as cluster_views
from inventory.resources.clusters.spec import SPEC as CLUSTERS
from inventory.resources.events import views as event_views
from inventory.resources.events.spec import SPEC as EVENTS
from inventory.resources.organizations import views as organization_views
from inventory.resources.organizations.spec import SPEC as ORGANIZATIONS
from inventory.resources.platforms import views as platform_views
from inventory.resources.platforms.spec import SPEC as PLATFORMS
from inventory.resources.scans import views as scan_views
from inventory.resources.scans.spec import SPEC as SCANS
from inventory.resources.tokens import views as token_views
from inventory.resources.tokens.spec import SPEC as TOKENS
from inventory.resources.webhooks import views as webhook_views
from inventory.resources.webhooks.spec import SPEC as WEBHOOKS
from inventory.store import get_store
from inventory.store.sessions import IDLE
from inventory.ui import lists
from inventory.ui.pages import OVERVIEW, page, principal, render, safe_next

SIGN_IN_COOKIE = "inventory_sign_in"  # the sign-in form's own form token (no session yet)
SUMMARY_ROWS = 10  # the overview's short lists
COUNTS_SECONDS = 15  # how long the overview's counts are shown before counting again
EDITABLE = ("environment", "version", "title", "description", "endpoint")
# The clusters whose support ends soonest: ordered by that date where the
# clusters' list can be (order_by support.all_ends_on), else the ones
# ending or in extended support, lowest versions first (then by date here).
ENDING_SOONEST = {"filter": 'support.status!="unsupported" AND support.status!="unknown"',
                  "order_by": "support.all_ends_on"} \
    if "support.all_ends_on" in CLUSTERS.orderings.fields else \
    {"filter": 'support.status="ending" OR support.status="extended"', "order_by": "version"}


def _quoted(text):
    """`text` as a filter's string value."""
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


# Sign-in and sign-out

@page("/sign-in", role=None, methods=("GET", "POST"))
def sign_in():
    """Sign in with a token: the token is checked as a bearer token is, and
    the browser then holds a session cookie that does not contain it."""
    target = safe_next(request.values.get("next") or OVERVIEW)
    error, status = None, 200
    if request.method == "POST":
        rate_limits.get_limits(current_app).count_sign_in(g.passage)
        sent, expected = request.form.get("form_token", ""), request.cookies.get(SIGN_IN_COOKIE)
        secret = request.form.get("token", "").strip()
        if not expected or not hmac.compare_digest(sent.encode(), expected.encode()):
            error, status = "This form is out of date: try again.", 403
        elif not secret:
            error, status = "Give a token.", 422
        else:
            found = auth.principal_of_secret(secret) if len(secret) <= 512 else None
            if found is None:
                error, status = "The token is unknown or revoked.", 401
            else:
                sessions = get_store().sessions
                sessions.end(request.cookies.get(SESSION_COOKIE))  # a new sign-in, a new id
                session_id, _ = sessions.start(found.key, auth.credential_digest(found))
                response = redirect(target, 303)
                response.set_cookie(SESSION_COOKIE, session_id, path="/", httponly=True,
                                    samesite="Lax", secure=request.is_secure)
                response.delete_cookie(SIGN_IN_COOKIE, path="/ui/sign-in")
                return response
    sign_in_token = secrets.token_urlsafe(24)
    body, status = render("sign_in.html", status, next=target, error=error,
                          sign_in_token=sign_in_token,
                          idle_minutes=int(IDLE.total_seconds() // 60))
    response = current_app.make_response((body, status))
    response.set_cookie(SIGN_IN_COOKIE, sign_in_token, path="/ui/sign-in", httponly=True,
                        samesite="Strict", secure=request.is_secure)
    return response


@page("/sign-out", methods=("POST",))
def sign_out():
    get_store().sessions.end(request.cookies.get(SESSION_COOKIE))
    response = redirect(url_for("ui.sign_in"), 303)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


# The fleet at a glance

@page("")
def overview():
    store, scope = get_store(), current_scope()
    counted, counted_at = _counts(store, scope)
    groups, total = counted["support"]
    environments = sorted({key["environment"] for key, _ in groups})
    counts = {(key["environment"], key["support.status"]): count for key, count in groups}
    ending = _page(store.clusters.list, "kubeclusters", CLUSTERS, **ENDING_SOONEST)
    ending.sort(key=lambda record: (record["support"]["all_ends_on"] or "9999", record["name"]))
    unscanned = _page(store.clusters.list, "kubeclusters", CLUSTERS, order_by="last_scanned_on")
    changes = _page(store.events.page, "events", EVENTS, order_by="occurred_on desc")
    return render("overview.html", total=total, counted_at=counted_at,
                  environments=environments, counts=counts, statuses=STATUSES,
                  versions=_version_bars(counted["versions"]),
                  readiness=_readiness_bars(counted["readiness"]),
                  support=_support_bars(groups),
                  blockers=counted["blockers"], ending=ending[:SUMMARY_ROWS],
                  unscanned=unscanned, changes=changes, ending_query=ENDING_SOONEST,
                  newest=changes[0]["id"] if changes else "",
                  event_types=" ".join(resources.event_types()), quoted=_quoted)


def _bar(label, count, kind, filter_text):
    return {"label": label, "count": count, "kind": kind,
            "href": url_for("ui.clusters", filter=filter_text)}


def _version_bars(groups):
    """The overview's chart of clusters by minor version, oldest first."""
    parsed = sorted(((version_parts(key["version"] or ""), key["version"], count)
                     for key, count in groups), key=lambda row: (row[0] is None, row[0] or ()))
    bars = []
    for parts, minor, count in parsed:
        if parts is None:  # not a version (the summary's null group), last
            bars.append({"label": "not a version", "count": count, "kind": "plain",
                         "href": None})
            continue
        bars.append(_bar(minor, count, "plain", f'version>={_quoted(minor)} AND '
                         f'version<{_quoted(f"{parts[0]}.{parts[1] + 1}")}'))
    return bars


def _readiness_bars(groups):
    """The chart of clusters by readiness status, in the readiness order."""
    counted = {key["readiness.status"]: count for key, count in groups}
    return [_bar(name, counted[name], name, f"readiness.status={_quoted(name)}")
            for name in READINESS_STATUSES if counted.get(name)]


def _support_bars(groups):
    """The chart of clusters by support status (the support table's columns added up)."""
    counted = {}
    for key, count in groups:
        counted[key["support.status"]] = counted.get(key["support.status"], 0) + count
    return [_bar(name, counted[name], name, f"support.status={_quoted(name)}")
            for name in STATUSES if counted.get(name)]


class Counts:
    """The overview's counts, per scope: by environment and support status,
    by readiness status, by minor version, and the upgrade blockers; kept
    COUNTS_SECONDS in this process: each is one pass over every cluster
    (at 100,000 clusters on the embedded store, a few hundred ms), the same
    summaries the API answers, and a glance at the fleet need not repeat
    them for each reload. The page says when they were counted."""

    def __init__(self):
        self._kept = {}  # scope -> (monotonic time, counts, counted at)
        self._lock = threading.Lock()

    def get(self, store, scope):
        """({"support": (groups, total), "readiness": groups, "versions":
        groups, "blockers": [((check, status, key), clusters)]}, counted at)."""
        kept = self._kept.get(scope)
        if kept is not None and time.monotonic() - kept[0] < COUNTS_SECONDS:
            return kept[1], kept[2]
        readiness, _ = store.clusters.summary(
            None, grouping.parse("readiness.status", CLUSTERS.group_fields), scope)
        versions, _ = store.clusters.summary(
            None, grouping.parse("version", CLUSTERS.group_fields), scope)
        blockers, _ = store.clusters.blockers(None, scope)
        found = {"support": store.clusters.summary(
            None, grouping.parse("environment,support.status", CLUSTERS.group_fields), scope),
            "readiness": readiness, "versions": versions, "blockers": blockers[:SUMMARY_ROWS]}
        counted_at = now_rfc3339()
        with self._lock:
            if len(self._kept) >= 4096:  # bounded: one entry an organization
                self._kept.clear()
            self._kept[scope] = (time.monotonic(), found, counted_at)
        return found, counted_at


def _counts(store, scope):
    return current_app.extensions["inventory.ui.counts"].get(store, scope)


def _page(fetch, list_key, spec, limit=SUMMARY_ROWS, more=False, **args):
    """The records of one bounded page of a list, as the API would list them;
    with `more`, and whether more may follow (a filtered page examines a
    bounded number of records: it may be short, even empty, and go on)."""
    asked, _ = page_request(list_key, {"limit": limit, **args}, spec.orderings)
    page = fetch(asked)
    return (page.records, page.next_after is not None) if more else page.records


# Lists

def _list_page(template, title, list_key, args_schema, fetch, orderings, **context):
    listing = lists.read(request.path, list_key, args_schema, fetch, orderings)
    return render(template, 422 if listing.failed else 200, listing=listing, title=title,
                  **context)


@page("/clusters")
def clusters():
    return _list_page("clusters.html", "Clusters", CLUSTERS.path,
                      cluster_views.listing.list_args, get_store().clusters.list,
                      CLUSTERS.orderings, export=url_for("ui.clusters_csv"))


@page("/clusters.csv")
def clusters_csv():
    return lists.export(CLUSTERS.path, cluster_views.listing, get_store().clusters.list,
                        CLUSTERS.orderings)


@page("/platforms.csv")
def platforms_csv():
    return lists.export(PLATFORMS.path, platform_views.listing, get_store().platforms.list,
                        PLATFORMS.orderings)


@page("/organizations.csv")
def organizations_csv():
    return lists.export(ORGANIZATIONS.path, organization_views.listing,
                        get_store().organizations.list, ORGANIZATIONS.orderings)


@page("/platforms")
def platforms():
    return _list_page("platforms.html", "Platforms", PLATFORMS.path,
                      platform_views.listing.list_args, get_store().platforms.list,
                      PLATFORMS.orderings, quoted=_quoted, export=url_for("ui.platforms_csv"))


@page("/organizations")
def organizations():
    return _list_page("organizations.html", "Organizations", ORGANIZATIONS.path,
                      organization_views.listing.list_args,
                      get_store().organizations.list, ORGANIZATIONS.orderings, quoted=_quoted,
                      export=url_for("ui.organizations_csv"))


@page("/changes")
def changes():
    return _list_page("changes.html", "Changes", "events", event_views.EventListArgsSchema,
                      get_store().events.page, EVENTS.orderings)


# One cluster

@page("/clusters/<cluster>")
def cluster(cluster):
    store, scope = get_store(), current_scope()
    found = store.clusters.get_doc(cluster, scope, shown=True)
    record = store.clusters.to_api(found)
    under = store.scans.parent_value(found)
    scans = lists.read(request.path, f"{CLUSTERS.path}/{under}/{SCANS.path}",
                       scan_views.listing.list_args,
                       partial(store.scans.list_under, under), SCANS.orderings,
                       default_order="scanned_on desc")  # the newest keep what they observed
    subject = f"/{CLUSTERS.path}/{record['name']}"
    history, more = _page(store.events.page, "events", EVENTS, more=True, limit=20,
                          filter=f"subject={_quoted(subject)}", order_by="occurred_on desc")
    history_link = url_for("ui.changes", filter=f"subject={_quoted(subject)}",
                           order_by="occurred_on desc")
    return render("cluster.html", 422 if scans.failed else 200, record=record, scans=scans,
                  history=history, more_history=more, history_link=history_link)


def _labels_text(labels):
    return "\n".join(f"{key}={value}" for key, value in sorted(labels.items()))


def _read_labels(text, current):
    """The labels' merge patch from the form's `key=value` lines: the keys
    left out are removed."""
    labels = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        key, equals, value = line.partition("=")
        if not equals:
            raise ValidationError({"labels": [f"Line {number}: write key=value."]})
        labels[key.strip()] = value.strip()
    return {**{key: None for key in current if key not in labels}, **labels}


@page("/clusters/<cluster>/edit", role="writer", methods=("GET", "POST"))
def cluster_edit(cluster):
    """A writer's conditional edit: the form carries the revision it was
    made from; a change made meanwhile is shown, never overwritten."""
    store, scope = get_store(), current_scope()
    record = store.clusters.get(cluster, scope)
    if request.method == "GET":
        return render("cluster_edit.html", record=record, values={
            **{name: record[name] or "" for name in EDITABLE},
            "labels": _labels_text(record["labels"])}, revision=record.revision, errors={})
    values = {name: request.form.get(name, "") for name in (*EDITABLE, "labels")}
    revision = request.form.get("revision", "")
    errors, conflict = {}, None
    try:
        changes = {name: values[name] for name in EDITABLE}
        changes["endpoint"] = changes["endpoint"].strip() or None
        changes["labels"] = _read_labels(values["labels"], record["labels"])
        changes = schemas.clusters.KubeClusterPatchSchema().load(changes)
        updated = store.clusters.update(cluster, changes, principal().name, scope=scope,
                                        revisions=[revision])
        return redirect(url_for("ui.cluster", cluster=updated["name"]), 303)
    except ValidationError as error:
        errors = {name: " ".join(_messages(messages))
                  for name, messages in error.messages.items()}
    except InvalidField as error:
        errors = {error.field or "form": error.message}
    except StaleRevision:
        conflict = store.clusters.get(cluster, scope)  # what it is now; nothing was written
        revision = None
    current = conflict or record
    return render("cluster_edit.html", 412 if conflict else 422, record=current, values=values,
                  revision=revision or current.revision, errors=errors, conflict=conflict,
                  theirs={**{name: current[name] or "" for name in EDITABLE},
                          "labels": _labels_text(current["labels"])})


def _messages(messages):
    if isinstance(messages, dict):
        for key, inner in messages.items():
            for message in _messages(inner):
                yield f"{key}: {message}"
    elif isinstance(messages, (list, tuple)):
        for inner in messages:
            yield from _messages(inner)
    else:
        yield str(messages)


# For admins: tokens and webhooks

@page("/tokens", role="admin", methods=("GET", "POST"))
def tokens():
    """The tokens; a POST makes one, whose secret that answer shows once."""
    store = get_store()
    if request.method == "GET":
        listing = lists.read(request.path, TOKENS.path, token_views.listing.list_args,
                             store.tokens.list, TOKENS.orderings)
        return render("tokens.html", 422 if listing.failed else 200, listing=listing,
                      created=None, errors={}, form={})
    form = {name: request.form.get(name, "").strip() for name in ("name", "role",
                                                                  "organization")}
    body = {name: form[name] for name in ("name", "role")}
    if form["organization"]:
        body["organization"] = form["organization"]
    created, errors = None, {}
    try:
        record, secret = store.tokens.create(schemas.tokens.TokenCreateSchema().load(body),
                                             principal().name, current_scope())
        created, form = {**record, "token": secret}, {}
    except ValidationError as error:
        errors = {name: " ".join(_messages(messages))
                  for name, messages in error.messages.items()}
    except InvalidField as error:
        errors = {error.field or "form": error.message}
    listing = lists.Listing(request.path, {}, sortable=("name", "created_on"))
    listing.records = _page(store.tokens.list, TOKENS.path, TOKENS)
    return render("tokens.html", 201 if created else 422, listing=listing, created=created,
                  errors=errors, form=form)


@page("/tokens/<id>/revoke", role="admin", methods=("POST",))
def token_revoke(id):  # noqa: A002 (the tokens' path key is `id`)
    store = get_store()
    store.tokens.revoke(id, scope=current_scope())
    store.sessions.end_all_of(id)  # (refused already: a session reads its token each time)
    return redirect(url_for("ui.tokens"), 303)


@page("/webhooks", role="admin")
def webhooks():
    return _list_page("webhooks.html", "Webhooks", WEBHOOKS.path,
                      webhook_views.listing.list_args, get_store().webhooks.list,
                      WEBHOOKS.orderings)


@page("/webhooks/<webhook>", role="admin")
def webhook(webhook):
    store = get_store().webhooks
    record = store.get(webhook, current_scope())
    key = record["id"]
    deliveries = lists.read(request.path, f"webhooks/{key}/deliveries",
                            schemas.webhooks.WebhookDeliveryListArgsSchema,
                            partial(store.deliveries_page, key), WEBHOOKS.orderings)
    return render("webhook.html", 422 if deliveries.failed else 200, record=record,
                  deliveries=deliveries)


@page("/webhooks/<webhook>/resume", role="admin", methods=("POST",))
def webhook_resume(webhook):
    """Deliver again where it stopped (410 when the feed keeps that point no more)."""
    store = get_store().webhooks
    record = store.update(webhook, {"active": True}, principal().name, scope=current_scope())
    return redirect(url_for("ui.webhook", webhook=record["id"]), 303)


@page("/<path:anything>", role=None, methods=("GET", "POST"))
def not_a_page(anything):
    raise NotFound()
