"""The rollouts' console pages, declared (inventory/ui/declared.py): the
list, and a rollout's page with its stages in order, each a bar of done,
ready, blocked and behind with the numbers as text, the soak left, the
blocked clusters with the checks that block them, and an Approve button on
a held stage for writers (a form that carries the session's form token)."""
from flask import redirect, request, url_for

from inventory.core.roles import allows
from inventory.http.auth import current_scope
from inventory.resources.rollouts import views as rollout_views
from inventory.resources.rollouts.spec import SPEC as ROLLOUTS
from inventory.store import get_store
from inventory.store.pages import PageRequest
from inventory.ui.declared import Column, Declared, declare, of
from inventory.ui.pages import page, principal

BLOCKED_SHOWN = 10  # blocked clusters listed under each stage (the API lists them all)
BAR_WIDTH = 400  # the stage bars' SVG width, in its own units
# the states in the bars' order, with their colours (SVG attributes: the
# console's policy allows no inline style)
STATES = (("done", "#2e7d32"), ("ready", "#1565c0"), ("blocked", "#c62828"),
          ("behind", "#9e9e9e"))


def _stages_text(record):
    return ", ".join(f"{stage['name']} {stage['state']}" for stage in record["status"]["stages"])


def stage_bar(stage):
    """[(state, colour, x, width, count)] of one stage's bar."""
    total, x, parts = stage["clusters"], 0, []
    for state, colour in STATES:
        width = round(BAR_WIDTH * stage[state] / total) if total else 0
        parts.append((state, colour, x, width, stage[state]))
        x += width
    return parts


def _blocked(record):
    """{stage: [blocked cluster rows]} of the stages that have any (the first few)."""
    store = get_store().rollouts
    doc = store.get_doc(record["name"], current_scope())
    found = {}
    for stage in record["status"]["stages"]:
        if not stage["blocked"]:
            continue
        name = stage["name"]
        page_of = store.members_page(doc, PageRequest(BLOCKED_SHOWN),
                                     lambda row, name=name: row["stage"] == name
                                     and row["state"] == "blocked")
        found[name] = page_of.records
    return found


def _context(record):
    caller = principal()
    return {"bars": {stage["name"]: stage_bar(stage) for stage in record["status"]["stages"]},
            "blocked": _blocked(record), "bar_width": BAR_WIDTH,
            "may_approve": caller is not None and allows(caller.role, "writer"),
            "states": STATES}


ROLLOUT_PAGES = declare(Declared(
    spec=ROLLOUTS, views=rollout_views.listing, title="Rollouts", singular="Rollout", menu=50,
    columns=(Column("Name", of("name"), "code", link=True),
             Column("Title", of("title")), Column("Target", of("target")),
             Column("State", of("status.state")), Column("Stages", _stages_text),
             Column("Organization", of("organization"), "organization", missing="fleet-wide"),
             Column("Created", of("created_on"), "when", sort="created_on")),
    fields=(Column("Name", of("name"), "code"),
            Column("Description", of("description"), "prose"), Column("Target", of("target")),
            Column("Organization", of("organization"), "organization", missing="fleet-wide"),
            Column("State", of("status.state")), Column("Unstaged clusters", of("status.unstaged")),
            Column("Counted", of("status.computed_on"), "when")),
    filter_example='target="1.32"', record_template="rollout.html", context=_context))


@page("/rollouts/<rollout>/approve", role="writer", methods=("POST",))
def rollout_approve(rollout):
    """Approve a held stage (409 on the error page when it is not held)."""
    get_store().rollouts.approve(rollout, request.form.get("stage", ""), principal().name,
                                 current_scope())
    return redirect(url_for(ROLLOUT_PAGES.endpoints["record"], rollout=rollout), 303)
