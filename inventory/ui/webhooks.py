"""The webhooks' console pages, for admins, declared
(inventory/ui/declared.py): the list, and a webhook's page with its
deliveries, newest first, and Resume on an inactive one."""
from functools import partial

from flask import redirect, request, url_for

import schemas.webhooks
from inventory.http.auth import current_scope
from inventory.resources.webhooks import views as webhook_views
from inventory.resources.webhooks.spec import SPEC as WEBHOOKS
from inventory.store import get_store
from inventory.ui import lists
from inventory.ui.declared import Column, Declared, declare, of
from inventory.ui.pages import page, principal


def _deliveries(record):
    key = record["id"]
    deliveries = lists.read(request.path, f"{WEBHOOKS.path}/{key}/deliveries",
                            schemas.webhooks.WebhookDeliveryListArgsSchema,
                            partial(get_store().webhooks.deliveries_page, key),
                            WEBHOOKS.orderings)
    return {"deliveries": deliveries, "status": 422 if deliveries.failed else 200}


def _whole(record):
    return record


WEBHOOK_PAGES = declare(Declared(
    spec=WEBHOOKS, views=webhook_views.listing, title="Webhooks", singular="Webhook",
    role="admin", menu=70, address="id", heading=of("url"), filter_example="active=false",
    columns=(Column("URL", of("url"), link=True),
             Column("Filter", of("filter"), "code", missing="all events"),
             Column("Active", _whole, "active"),
             Column("Last delivered", of("last_delivered_event")),
             Column("Created", of("created_on"), "when", sort="created_on")),
    fields=(Column("Id", of("id"), "code"), Column("URL", of("url"), "code"),
            Column("Filter", of("filter"), "code", missing="all events"),
            Column("Organization", of("organization"), "organization"),
            Column("Description", of("description"), "prose"),
            Column("Active", _whole, "active"),
            Column("Last delivered event", of("last_delivered_event"))),
    record_template="webhook.html", context=_deliveries))


@page("/webhooks/<webhook>/resume", role="admin", methods=("POST",))
def webhook_resume(webhook):
    """Deliver again where it stopped (410 when the feed keeps that point no more)."""
    record = get_store().webhooks.update(webhook, {"active": True}, principal().name,
                                         scope=current_scope())
    return redirect(url_for(WEBHOOK_PAGES.endpoints["record"], webhook=record["id"]), 303)
