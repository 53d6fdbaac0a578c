"""The platforms' console page, declared (inventory/ui/declared.py): the
list, each platform's name leading to its clusters, with its CSV export."""
from inventory.resources.platforms import views as platform_views
from inventory.resources.platforms.spec import SPEC as PLATFORMS
from inventory.ui.declared import Column, Declared, declare, filtered, of


def control_plane_text(record):
    plane = record.get("control_plane") or {}
    kind = plane.get("kind")
    return f"{plane.get('provider')} ({kind})" if kind else plane.get("provider")


def infrastructure_text(record):
    """`cloud.provider=aws region=...`: its fields, one level of nesting spelled out."""
    parts = []
    for name, value in (record.get("infrastructure") or {}).items():
        if isinstance(value, dict):
            parts += [f"{name}.{inner}={shown}" for inner, shown in value.items()]
        else:
            parts.append(f"{name}={value}")
    return " ".join(parts)


PLATFORM_PAGES = declare(Declared(
    spec=PLATFORMS, views=platform_views.listing, title="Platforms", singular="Platform",
    path="platforms", menu=20, export=True, filter_example='control_plane.provider="eks"',
    columns=(Column("Name", of("name"), sort="name", link=filtered("clusters", "platform")),
             Column("Title", of("title"), sort="title"),
             Column("Organization", of("organization"), "organization"),
             Column("Control plane", control_plane_text),
             Column("Infrastructure", infrastructure_text),
             Column("Created", of("created_on"), "when", sort="created_on"))))
