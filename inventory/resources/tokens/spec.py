"""API tokens: admins mint them, by `tok_` id (never by secret)."""
from inventory.core.ordering import Orderings
from inventory.core.spec import IdForm, PathKey, ResourceSpec

ID = IdForm("tok")
SECRET_PREFIX = "inv_"  # what a token's secret starts with

SPEC = ResourceSpec(
    name="tokens", kind="token", path="tokens",
    parent="organizations", parent_field="organization",
    id_form=ID,
    # /tokens/{id}: a token's id, never its secret (a parameter named `token` reads as a
    # credential in the URL to linters and proxies alike)
    path_key=PathKey("id", "The token's id (`tok_` + UUID; never its secret).",
                     f"a token id ({ID.described})", (ID.pattern,), ID.max_length, ID.example),
    event_kind="token", event_actions=("created", "deleted"), quota_kind="tokens",
    refuses_parent_delete=False,
    filter_fields={"id": "string", "name": "string", "role": "string",
                   "organization": "string", "created_on": "timestamp",
                   "last_used_on": "timestamp"},
    orderings=Orderings.of("name", "created_on"),
    indexes=(((("hash", 1),), {"unique": True}),
             ((("organization", 1), ("_id", 1)), {})),
)
