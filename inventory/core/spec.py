"""What a resource declares about itself, in one place (its folder's
`spec.py`): every registry of the service (blueprints' path keys, indexes,
event types, orderings, filter and group fields, quota kinds, cascades) is
derived from these declarations (inventory/resources/__init__.py)."""
from dataclasses import dataclass, field

from inventory.core.ids import IdForm  # noqa: F401 (declared with the specs)
from inventory.core.ordering import Orderings

# The audit fields every resource record carries, filterable as these types.
AUDIT_FIELDS = {"created_by": "string", "created_on": "timestamp",
                "last_modified_by": "string", "last_modified_on": "timestamp"}

EVENT_ACTIONS = ("created", "updated", "deleted")


@dataclass(frozen=True)
class PathKey:
    """What a path parameter may be: the check the views make and the
    document shows."""

    name: str  # the parameter's name in routes (`<cluster>`)
    description: str
    what: str  # for the 422's message: "Must be {what}."
    patterns: tuple
    max_length: int  # the longest value any of the patterns matches, for the document
    example: str | None = None  # a value it allows (for tests that walk every route)

    def matches(self, value):
        return any(pattern.match(value) for pattern in self.patterns)


@dataclass(frozen=True)
class ResourceSpec:
    """One resource, declared. `name` is its folder's and collection's name."""

    name: str
    kind: str  # the resource's name in messages ("cluster")
    path_key: PathKey | None = None
    path: str | None = None  # its collection's path in the API ("kubeclusters")
    # addressed under its parent's record: /{parent's path}/{parent key}/{path}/{key}
    nested: bool = False
    id_form: IdForm | None = None
    parent: str | None = None  # the name of the resource it belongs to; deleted with it
    # with a parent: the field of a record that holds its parent's key
    # ("key", as the parent is addressed in the store) or its "id"
    parent_field: str | None = None
    parent_holds: str = "key"
    event_kind: str | None = None  # the record's name in event types ("kubecluster")
    event_actions: tuple = EVENT_ACTIONS
    filter_fields: dict = field(default_factory=dict)  # API field -> type (inventory.store.query)
    # what a record reads as where it lacks a field (written before the field existed)
    read_defaults: dict = field(default_factory=dict)
    orderings: Orderings | None = None
    group_fields: dict = field(default_factory=dict)  # group_by field -> stored fields it is made of
    indexes: tuple = ()  # ((keys, options), ...): keys as ((field, 1), ...)
    quota_kind: str | None = None  # the organization's quota its records count against
    # the most records of it the embedded store is measured for (its envelope:
    # docs/sizing.md); counted in /readyz and at start
    envelope: int | None = None
    refuses_parent_delete: bool = True  # False: deleted with its parent even unforced (tokens)
    # other resources whose records its store reads (rollouts read clusters):
    # the Store hands it theirs, as attributes named after them
    reads: tuple = ()

    def __post_init__(self):
        if (self.parent is None) != (self.parent_field is None):
            raise ValueError(f"{self.name}: a parent and its parent_field are declared together")
        if self.parent_holds not in ("key", "id"):
            raise ValueError(f"{self.name}: parent_holds is 'key' or 'id'")
        if self.nested and self.parent is None:
            raise ValueError(f"{self.name}: only a child is addressed under its parent")

    @property
    def event_types(self):
        return tuple(f"{self.event_kind}.{action}" for action in self.event_actions) \
            if self.event_kind else ()


def ordered(specs):
    """The specs with every parent before its children (for wiring stores)."""
    by_name = {spec.name: spec for spec in specs}
    done, result = set(), []

    def visit(spec, seen=()):
        if spec.name in done:
            return
        if spec.name in seen:
            raise RuntimeError(f"resources' parents make a cycle at {spec.name}")
        if spec.parent is not None:
            visit(by_name[spec.parent], (*seen, spec.name))
        done.add(spec.name)
        result.append(spec)
    for spec in specs:
        visit(spec)
    return result
