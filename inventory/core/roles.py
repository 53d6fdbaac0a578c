"""Token roles, in rank order: each may do what the ones before it may.

reader: read everything it can see; writer: also create, change and delete
platforms, clusters and scans; admin: also organizations and tokens.
"""
ROLES = ("reader", "writer", "admin")
_RANK = {role: rank for rank, role in enumerate(ROLES)}


def allows(role, needed):
    """Whether a token of `role` may call an operation that needs `needed`."""
    return _RANK[role] >= _RANK[needed]
