"""The clusters' console pages, declared (inventory/ui/declared.py): the
list (with its CSV export), and a cluster's page: its declared fields,
then sections of its own (labels, support, upgrade readiness, its scans
newest first, its history); and a writer's conditional edit."""
from functools import partial

from flask import redirect, request, url_for
from marshmallow import ValidationError

import schemas.clusters
from inventory.core.errors import InvalidField, StaleRevision
from inventory.http.auth import current_scope
from inventory.resources.clusters import views as cluster_views
from inventory.resources.clusters.spec import SPEC as CLUSTERS
from inventory.resources.events.spec import SPEC as EVENTS
from inventory.resources.scans import views as scan_views
from inventory.resources.scans.spec import SPEC as SCANS
from inventory.store import get_store
from inventory.ui import lists
from inventory.ui.declared import Column, Declared, declare, filtered, of, quoted
from inventory.ui.lists import first_page
from inventory.ui.pages import form_errors, page, principal, render

EDITABLE = ("environment", "version", "title", "description", "endpoint")
HISTORY_SHOWN = 20  # a cluster's latest changes on its page (the rest: Changes, filtered)


def _audit(moment, by):
    return lambda record: (record[moment], record[by])


def _context(record):
    """A cluster's own sections: its scans (a page, newest first: the newest
    keep what they observed) and its history; 422 for a bad scans' query."""
    store = get_store()
    under = store.scans.parent_value(record)
    scans = lists.read(request.path, f"{CLUSTERS.path}/{under}/{SCANS.path}",
                       scan_views.listing.list_args, partial(store.scans.list_under, under),
                       SCANS.orderings, default_order="scanned_on desc")
    subject = "subject=" + quoted(f"/{CLUSTERS.path}/{record['name']}")
    history, more = first_page(store.events.page, EVENTS, limit=HISTORY_SHOWN, more=True,
                               filter=subject, order_by="occurred_on desc")
    return {"scans": scans, "history": history, "more_history": more,
            "history_link": url_for("ui.changes", filter=subject, order_by="occurred_on desc"),
            "status": 422 if scans.failed else 200}


CLUSTER_PAGES = declare(Declared(
    spec=CLUSTERS, views=cluster_views.listing, title="Clusters", singular="Cluster",
    path="clusters", menu=10, export=True,
    filter_example='environment="production" AND support.status="ending"',
    columns=(Column("Name", of("name"), link=True, sort="name"),
             Column("Environment", of("environment"), sort="environment"),
             Column("Platform", of("platform")),
             Column("Version", of("version"), sort="version"),
             Column("Support", of("support"), "support"),
             Column("Readiness", of("readiness.status"), "status"),
             Column("Last scanned", of("last_scanned_on"), "when", sort="last_scanned_on")),
    fields=(Column("Id", of("id"), "code"),
            Column("Environment", of("environment")),
            Column("Platform", of("platform"), link=filtered("clusters", "platform",
                                                             key="platform")),
            Column("Organization", of("organization"), "organization"),
            Column("Version", of("version")),
            Column("Endpoint", of("endpoint"), "code", missing="not known"),
            Column("Description", of("description"), "prose"),
            Column("Last scanned", of("last_scanned_on"), "when"),
            Column("Created", _audit("created_on", "created_by"), "when_by"),
            Column("Last changed", _audit("last_modified_on", "last_modified_by"), "when_by")),
    record_template="cluster.html", context=_context))


def labels_text(labels):
    return "\n".join(f"{key}={value}" for key, value in sorted(labels.items()))


def labels_patch(text, current):
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


def _form_values(record):
    return {**{name: record[name] or "" for name in EDITABLE},
            "labels": labels_text(record["labels"])}


@page("/clusters/<cluster>/edit", role="writer", methods=("GET", "POST"))
def cluster_edit(cluster):
    """A writer's conditional edit: the form carries the revision it was
    made from; a change made meanwhile is shown, never overwritten."""
    store = CLUSTER_PAGES.store()
    scope = current_scope()
    record = store.get(cluster, scope)
    if request.method == "GET":
        return render("cluster_edit.html", record=record, values=_form_values(record),
                      revision=record.revision, errors={})
    values = {name: request.form.get(name, "") for name in (*EDITABLE, "labels")}
    revision = request.form.get("revision", "")
    errors, conflict = {}, None
    try:
        changes = {name: values[name] for name in EDITABLE}
        changes["endpoint"] = changes["endpoint"].strip() or None
        changes["labels"] = labels_patch(values["labels"], record["labels"])
        changes = schemas.clusters.KubeClusterPatchSchema().load(changes)
        updated = store.update(cluster, changes, principal().name, scope=scope,
                               revisions=[revision])
        return redirect(url_for("ui.cluster", cluster=updated["name"]), 303)
    except (ValidationError, InvalidField) as error:
        errors = form_errors(error)
    except StaleRevision:
        conflict = store.get(cluster, scope)  # what it is now; nothing was written
        revision = None
    current = conflict or record
    return render("cluster_edit.html", 412 if conflict else 422, record=current, values=values,
                  revision=revision or current.revision, errors=errors, conflict=conflict,
                  theirs=_form_values(current))
