"""The console's own pages (docs/console.md): the sign-in and sign-out, and
the overview of the fleet with its kept counts; the resources' pages are
declared, each in the module named after its resource
(inventory/ui/declared.py). Each reads what one API operation reads,
through the same store calls with the caller's scope."""
import hmac
import secrets
import threading
import time

from flask import current_app, g, redirect, request, url_for
from werkzeug.exceptions import NotFound

from inventory import resources
from inventory.core import grouping
from inventory.core.ids import now_rfc3339
from inventory.core.lifecycle import STATUSES
from inventory.core.readiness import STATUSES as READINESS_STATUSES
from inventory.core.versions import version_parts
from inventory.http import auth, rate_limits
from inventory.http.auth import SESSION_COOKIE, current_scope
from inventory.resources.clusters.spec import SPEC as CLUSTERS
from inventory.resources.events.spec import SPEC as EVENTS
from inventory.store import get_store
from inventory.store.sessions import IDLE
from inventory.ui.declared import quoted
from inventory.ui.lists import first_page
from inventory.ui.pages import OVERVIEW, page, render, safe_next

SIGN_IN_COOKIE = "inventory_sign_in"  # the sign-in form's own form token (no session yet)
SUMMARY_ROWS = 10  # the overview's short lists
COUNTS_SECONDS = 15  # how long the overview's counts are shown before counting again
# The clusters whose support ends soonest: ordered by that date where the
# clusters' list can be (order_by support.all_ends_on), else the ones
# ending or in extended support, lowest versions first (then by date here).
ENDING_SOONEST = {"filter": 'support.status!="unsupported" AND support.status!="unknown"',
                  "order_by": "support.all_ends_on"} \
    if "support.all_ends_on" in CLUSTERS.orderings.fields else \
    {"filter": 'support.status="ending" OR support.status="extended"', "order_by": "version"}


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
    ending = first_page(store.clusters.list, CLUSTERS, SUMMARY_ROWS, **ENDING_SOONEST)
    ending.sort(key=lambda record: (record["support"]["all_ends_on"] or "9999", record["name"]))
    unscanned = first_page(store.clusters.list, CLUSTERS, SUMMARY_ROWS,
                           order_by="last_scanned_on")
    changes = first_page(store.events.page, EVENTS, SUMMARY_ROWS, order_by="occurred_on desc")
    return render("overview.html", total=total, counted_at=counted_at,
                  environments=environments, counts=counts, statuses=STATUSES,
                  versions=_version_bars(counted["versions"]),
                  readiness=_readiness_bars(counted["readiness"]),
                  support=_support_bars(groups),
                  blockers=counted["blockers"], ending=ending[:SUMMARY_ROWS],
                  unscanned=unscanned, changes=changes, ending_query=ENDING_SOONEST,
                  newest=changes[0]["id"] if changes else "",
                  event_types=" ".join(resources.event_types()), quoted=quoted)


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
        bars.append(_bar(minor, count, "plain", f'version>={quoted(minor)} AND '
                         f'version<{quoted(f"{parts[0]}.{parts[1] + 1}")}'))
    return bars


def _readiness_bars(groups):
    """The chart of clusters by readiness status, in the readiness order."""
    counted = {key["readiness.status"]: count for key, count in groups}
    return [_bar(name, counted[name], name, f"readiness.status={quoted(name)}")
            for name in READINESS_STATUSES if counted.get(name)]


def _support_bars(groups):
    """The chart of clusters by support status (the support table's columns added up)."""
    counted = {}
    for key, count in groups:
        counted[key["support.status"]] = counted.get(key["support.status"], 0) + count
    return [_bar(name, counted[name], name, f"support.status={quoted(name)}")
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


@page("/<path:anything>", role=None, methods=("GET", "POST"))
def not_a_page(anything):
    raise NotFound()
