"""The organizations' console page, declared (inventory/ui/declared.py):
the list, each organization's title leading to its clusters (its id
beside it), with its CSV export."""
from inventory.resources.organizations import views as organization_views
from inventory.resources.organizations.spec import SPEC as ORGANIZATIONS
from inventory.ui.declared import Column, Declared, declare, filtered, of

ORGANIZATION_PAGES = declare(Declared(
    spec=ORGANIZATIONS, views=organization_views.listing, title="Organizations",
    singular="Organization", menu=30, export=True, filter_example='title="Acme*"',
    columns=(Column("Title", of("title"), sort="title",
                    link=filtered("clusters", "organization", key="id")),
             Column("Id", of("id"), "code"),
             Column("Description", of("description")),
             Column("Created", of("created_on"), "when", sort="created_on"),
             Column("Last changed", of("last_modified_on"), "when", sort="last_modified_on"))))
