"""The change feed's console page (`/ui/changes`), declared
(inventory/ui/declared.py): its events, filterable, each with its changes."""
from inventory.resources.events import views as event_views
from inventory.resources.events.spec import SPEC as EVENTS
from inventory.ui.declared import Column, Declared, declare, of

CHANGE_PAGES = declare(Declared(
    spec=EVENTS, views=None, title="Changes", singular="Change", path="changes", menu=40,
    list_args=event_views.EventListArgsSchema, fetch=lambda store: store.events.page,
    filter_example='subject="/kubeclusters/payments"',
    columns=(Column("When", of("occurred_on"), "when", sort="occurred_on"),
             Column("Type", of("type")), Column("Subject", of("subject")),
             Column("Actor", of("actor")), Column("Changes", of("changes"), "changes"))))
