"""What an update changed, as its event says it: {dotted path: {"from", "to"}}
of the fields that differ between the record before and after."""
from inventory.core.filtering import path_text

# Audit fields change with every write; the event's own fields say who and when.
_UNCOMPARED = frozenset({"last_modified_by", "last_modified_on"})


def _diff(before, after, prefix=()):
    """{dotted path: {"from", "to"}} of the leaves that differ, each path
    written as a filter names its field (a segment with a `.` or `/` quoted:
    `labels."app.kubernetes.io/name"`, so that the path stays unambiguous)."""
    changes = {}
    for key in sorted(set(before) | set(after), key=str):
        old, new = before.get(key), after.get(key)
        path = (*prefix, key)
        if isinstance(old, dict) and isinstance(new, dict):
            changes.update(_diff(old, new, path))
        elif old != new:
            changes[path_text(path)] = {"from": old, "to": new}
    return changes


def changes_between(before, after, computed=()):
    """The fields an update changed, as an event's `changes` (None: nothing).
    `computed` fields (worked out from others) are left out, nested ones
    (`readiness.checks`) by their dotted path: they change with the fields
    they are computed from, which are listed."""
    ignored = _UNCOMPARED | set(computed)
    changes = _diff({k: v for k, v in before.items() if k not in ignored},
                    {k: v for k, v in after.items() if k not in ignored})
    # a computed field may be a nested one (`readiness.checks`)
    changes = {path: change for path, change in changes.items()
               if not any(path == field or path.startswith(f"{field}.")
                          for field in computed if "." in field)}
    return changes or None
