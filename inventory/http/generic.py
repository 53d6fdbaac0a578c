"""What the resources' views share beyond the request's layers: a list's
declaration (`RecordList`: the arguments its query takes and the columns
its CSV writes) and a child's parent read in the caller's scope (`under`).

Each view says what it does in its resource's views.py: its declaration
(`@blp.arguments`, `@blp.response`, `@operation`: the one place an
operation is declared, and what the OpenAPI document is made from) and a
body of a few lines that load, call the store and answer. Why, and what it
replaced: docs/decisions.md, "Views that say what they do".

    @blp.route("/<platform>")
    class KubePlatform(MethodView):
        @blp.response(200, KubePlatformSchema)
        @operation("getKubePlatform", role="reader", if_none_match=True, etag=True,
                   errors=(404, 422))
        def get(self, platform):
            '''Read a platform ...'''
            return read(get_store().platforms.get(platform, current_scope()))"""
from typing import NamedTuple

from inventory.http.auth import current_scope
from inventory.http.csv_export import RecordColumns
from schemas.common import list_args


class RecordList(NamedTuple):
    """A resource's list, as its GET declares it and the console's pages
    read it: `list_args`, the schema of its query (`limit`, `continue`,
    `filter`, `order_by`, `format`), and `columns`, its CSV's columns (the
    records as the JSON pages dump them, so that the console's Export CSV
    writes the same)."""

    list_args: type
    columns: RecordColumns

    @classmethod
    def of(cls, name, envelope, filter_examples, orderings):
        """The list `{name}` answered in `envelope` (its `results` the
        records, its `pagination` the page): its arguments
        (`{name}ArgsSchema`) made from the schema module's filter examples
        and the spec's orderings (the schemas are handed them, never import
        a spec), and its columns from the records' schema."""
        return cls(list_args(name, filter_examples, orderings),
                   RecordColumns(envelope._declared_fields["results"].inner.schema))


def under(parents, children, parent_key):
    """Where a nested child's records are sought: the parent `parent_key`
    read in the caller's scope (NotFound, a 404, if the caller cannot see
    it), as its children hold it (`children.parent_value`). A child is then
    found among that parent's children only (`list_under`, `get_under`;
    `update` and `delete` with `under=`), never under another parent."""
    return children.parent_value(parents.get_doc(parent_key, current_scope(), shown=True))
