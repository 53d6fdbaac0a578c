"""The resources: one folder each (`spec.py`, `store.py`, `views.py`; see
docs/development/adding-a-resource.md). This module finds them; every
registry of the service is derived from what they declare."""
import importlib
import pkgutil

from inventory.core.spec import ordered


def _module(spec, part):
    return importlib.import_module(f"{__name__}.{spec.name}.{part}")


def _discover():
    specs = [importlib.import_module(f"{__name__}.{info.name}.spec").SPEC
             for info in pkgutil.iter_modules(__path__) if info.ispkg]
    return tuple(ordered(sorted(specs, key=lambda spec: spec.name)))


SPECS = _discover()  # parents before their children


def event_types():
    """Every event type of the feed, from the resources' declarations."""
    return [event_type for spec in SPECS for event_type in spec.event_types]


def store_classes():
    """(spec, its ResourceStore class) of each resource with a store, parents first."""
    pairs = []
    for spec in SPECS:
        try:
            module = _module(spec, "store")
        except ModuleNotFoundError as error:
            if error.name != f"{__name__}.{spec.name}.store":
                raise
            continue
        (store_class,) = [value for value in vars(module).values()
                          if isinstance(value, type) and value.__dict__.get("spec") is spec]
        pairs.append((spec, store_class))
    return pairs


def blueprints():
    """The flask-smorest Blueprint (`blp`) of each resource's views."""
    return [_module(spec, "views").blp for spec in SPECS]
