"""The generic operations of a resource (list, create, read, change,
delete), made from its spec and its schemas: a resource's views module
declares the ones it has, with only what is particular to each.

    views = ResourceViews(blp, SPEC, schemas.platforms, "KubePlatform")

    @blp.route("")
    class KubePlatforms(MethodView):
        @views.listing()
        def get(self):
            '''List platforms, in name order'''

Each decorator takes what the operation declares as `operation` does
(inventory.http.operations), over the defaults ResourceViews derives, and
puts flask-smorest's `arguments` and `response` around the generic method.
The decorated method lends it its name and docstring (the operation's
summary and description); its body is not run. A generic method is made
once per operation at import, with what it declares already resolved (ETags
or not, a secret or not, under a parent or not): a request runs the same
calls a written-out view ran, no layer more.

A resource addressed under its parent (`spec.nested`, as scans are under
their cluster) is found through it: the parent's record first (404 if the
caller cannot see it), then the child among the parent's
(`list_under`, `get_under`, `create_under` of its store; `update` and
`delete` with `under=`): a child is never found under another parent."""
from functools import partial

from flask import url_for

from inventory.http.auth import current_principal, current_scope
from inventory.http.conditional import if_match, read, with_etag
from inventory.http.csv_export import RecordColumns
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.store import get_store
from schemas.common import DeleteArgsSchema, list_args


def _lend(stub, method):
    """`method` under the stub's names and docstring."""
    for name in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(method, name, getattr(stub, name))
    return method


class ResourceViews:
    """The generic operations of the resource `spec`, served by `blp`, named
    after `name` ("KubePlatform": `listKubePlatforms`, `createKubePlatform`,
    `getKubePlatform`, `updateKubePlatform`, `deleteKubePlatform`), with
    the schemas of the module `schemas` named after it too (`{name}Schema`,
    `{name}CreateSchema`, `{name}PatchSchema`, `{name}ListSchema`, and
    `New{name}Schema` for a create's answer that holds a secret); a list's
    arguments are made here from the module's `FILTER_EXAMPLES` and the
    spec's orderings.

    What each operation declares has defaults that any keyword overrides:
    the role (`reader` for reads, `writer` for writes); with `etags`, ETags
    on what it answers, If-None-Match on reads and If-Match on writes;
    Idempotency-Key on creates, unless they answer a secret; and the error
    statuses those imply (a resource under its `parent`, the parent's spec,
    answers 404 for a parent not found)."""

    def __init__(self, blp, spec, schemas, name, *, reader="reader", writer="writer",
                 etags=True, parent=None):
        if spec.nested and parent is None:
            raise ValueError(f"{spec.name} is addressed under its parent: give its spec")
        self.blp, self.spec, self.name = blp, spec, name
        self.reader, self.writer, self.etags = reader, writer, etags
        self.schema = getattr(schemas, f"{name}Schema")
        self.create_schema = getattr(schemas, f"{name}CreateSchema", None)
        self.patch_schema = getattr(schemas, f"{name}PatchSchema", None)
        # made here: the schemas are handed the spec's orderings, never import it
        self.list_args = list_args(f"{name}List", schemas.FILTER_EXAMPLES, spec.orderings) \
            if hasattr(schemas, "FILTER_EXAMPLES") else None
        self.envelope = getattr(schemas, f"{name}ListSchema", None)
        self.new_schema = getattr(schemas, f"New{name}Schema", None)
        self.parent = parent if spec.nested else None
        self.item_endpoint = None  # `.<the view class that reads one record>`, for Location
        self.columns = None  # the list's CSV columns, once it is declared

    def _declare(self, stub, method, declared, response, arguments=None):
        operation_id = declared.pop("operation_id")
        method = operation(operation_id, **declared)(_lend(stub, method))
        method = self.blp.response(*response)(method)
        if arguments is not None:
            schema, options = arguments
            if schema is None:
                raise ValueError(f"{stub.__qualname__}: its schema module has no schema for "
                                 f"{operation_id}'s arguments (named after {self.name!r})")
            method = self.blp.arguments(schema, **options)(method)
        return method

    def _found(self, path):
        """(the resource's store, where its record at `path` is sought): in
        the caller's scope; or for a nested child, under its parent, read
        first in that scope (404 if the caller cannot see it), and among
        that parent's children only."""
        store = get_store()
        child = getattr(store, self.spec.name)
        if self.parent is None:
            return child, {"scope": current_scope()}
        parent = getattr(store, self.parent.name).get_doc(
            path[self.parent.path_key.name], current_scope(), shown=True)
        return child, {"under": child.parent_value(parent)}

    def listing(self, **declared):
        """GET on the collection: a page of records (`filter`, `order_by`,
        `limit`, `continue`), or the whole match as CSV (`format=csv` or
        `Accept: text/csv`), in columns flattened from the record's schema."""
        name, orderings = self.spec.name, self.spec.orderings
        declared = {"operation_id": f"list{self.name}s", "role": self.reader,
                    "errors": (404, 422) if self.parent else (422,), "csv": True, **declared}
        # the records as the JSON pages dump them: the envelope's `results`
        # (kept: the console's Export CSV writes the same columns)
        columns = self.columns = RecordColumns(
            self.envelope._declared_fields["results"].inner.schema)

        def declare(stub):
            if self.parent is None:
                list_key = self.spec.path

                def get(view, args):
                    return list_page(list_key, args, getattr(get_store(), name).list, orderings,
                                     columns, f"{list_key}.csv")
            else:
                parent, parent_key = self.parent.name, self.parent.path_key.name
                prefix, suffix = f"{self.parent.path}/", f"/{self.spec.path}"

                def get(view, args, **path):
                    store = get_store()
                    found = getattr(store, parent).get_doc(path[parent_key], current_scope(),
                                                           shown=True)
                    child = getattr(store, name)
                    under = child.parent_value(found)
                    return list_page(f"{prefix}{under}{suffix}", args,
                                     partial(child.list_under, under), orderings, columns,
                                     f"{self.parent.path}-{path[parent_key]}-{self.spec.path}.csv")
            return self._declare(stub, get, declared, (200, self.envelope),
                                 (self.list_args, {"location": "query"}))
        return declare

    def creating(self, *, secret_field=None, checked=None, body_required=True, **declared):
        """POST on the collection: 201 with the record and its `Location`.
        `secret_field`: the store makes a secret too, answered this once in
        that field (`Cache-Control: no-store`); `checked(body)`: the body,
        checked further by the view (422s); `body_required=False`: an empty
        body is an empty record."""
        name, key = self.spec.name, self.spec.path_key.name
        secret = secret_field is not None  # then no ETag, and no replay of the secret
        declared = {"operation_id": f"create{self.name}", "role": self.writer,
                    "etag": self.etags and not secret, "idempotency_key": not secret,
                    "secret": secret, "errors": (404, 422) if self.parent else (
                        (422,) if secret else (409, 422)), **declared}
        etag = declared["etag"]
        if secret and (etag or self.parent):
            raise ValueError("a secret is answered once: with no ETag, and not under a parent")

        def declare(stub):
            if self.parent is None and secret:
                def post(view, body):
                    store = getattr(get_store(), name)
                    record, shown_once = store.create(checked(body) if checked else body,
                                                      current_principal().name, current_scope())
                    location = url_for(self.item_endpoint, _external=True,
                                       **{key: record[store.address_field]})
                    return {**record, secret_field: shown_once}, 201, {"Location": location}
            elif self.parent is None:
                def post(view, body):
                    store = getattr(get_store(), name)
                    record = store.create(checked(body) if checked else body,
                                          current_principal().name, current_scope())
                    location = url_for(self.item_endpoint, _external=True,
                                       **{key: record[store.address_field]})
                    if etag:
                        return with_etag(record, 201, {"Location": location})
                    return record, 201, {"Location": location}
            else:
                parent_key = self.parent.path_key.name

                def post(view, body, **path):
                    store = getattr(get_store(), name)
                    record = store.create_under(path[parent_key], checked(body) if checked
                                                else body, current_principal().name,
                                                current_scope())
                    location = url_for(self.item_endpoint, _external=True,
                                       **{**path, key: record[store.address_field]})
                    if etag:
                        return with_etag(record, 201, {"Location": location})
                    return record, 201, {"Location": location}
            arguments = {} if body_required else {"required": False}
            return self._declare(stub, post, declared,
                                 (201, self.new_schema if secret else self.schema),
                                 (self.create_schema, arguments))
        return declare

    def reading(self, **declared):
        """GET on one record; with `etag`, its ETag, and with
        `if_none_match`, 304 when it is at one of If-None-Match's."""
        name, key = self.spec.name, self.spec.path_key.name
        declared = {"operation_id": f"get{self.name}", "role": self.reader,
                    "if_none_match": self.etags, "etag": self.etags, "errors": (404, 422),
                    **declared}
        etag = declared["etag"]

        def declare(stub):
            self.item_endpoint = "." + stub.__qualname__.rsplit(".", 2)[-2]  # its class
            if self.parent is None:
                if etag:
                    def get(view, **path):
                        return read(getattr(get_store(), name).get(path[key], current_scope()))
                else:
                    def get(view, **path):
                        return getattr(get_store(), name).get(path[key], current_scope())
            else:
                parent, parent_key = self.parent.name, self.parent.path_key.name

                def get(view, **path):
                    store = get_store()
                    found = getattr(store, parent).get_doc(path[parent_key], current_scope(),
                                                           shown=True)
                    child = getattr(store, name)
                    record = child.get_under(child.parent_value(found), path[key])
                    return read(record) if etag else record
            return self._declare(stub, get, declared, (200, self.schema))
        return declare

    def updating(self, *, checked=None, **declared):
        """PATCH on one record: a JSON merge patch (no body: nothing
        changes); with `if_match`, only at one of If-Match's ETags."""
        key = self.spec.path_key.name
        declared = {"operation_id": f"update{self.name}", "role": self.writer,
                    "if_match": self.etags, "etag": self.etags,
                    "errors": (404, 409, 412, 422) if self.etags else (404, 422), **declared}
        etag, conditional = declared["etag"], declared["if_match"]
        found = self._found

        def declare(stub):
            def patch(view, changes, **path):
                store, where = found(path)
                record = store.update(
                    path[key], checked(changes) if checked else changes,
                    current_principal().name, revisions=if_match() if conditional else None,
                    **where)
                return with_etag(record) if etag else record
            return self._declare(stub, patch, declared, (200, self.schema),
                                 (self.patch_schema, {"required": False}))
        return declare

    # Whether a resource's children refuse its unforced delete (their specs'
    # `refuses_parent_delete`): handed by inventory.resources, which knows
    # every spec, before any views module is imported.
    children_refuse = staticmethod(lambda spec: False)

    def deleting(self, *, force=None, **declared):
        """DELETE of one record and everything below it. It takes `force`
        (else 409) when its children refuse an unforced delete, as their
        specs declare (`force=` overrides; tests/unit/http/test_operations.py
        checks it); with `if_match`, only at one of If-Match's ETags."""
        key = self.spec.path_key.name
        forced = self.children_refuse(self.spec) if force is None else force
        declared = {"operation_id": f"delete{self.name}", "role": self.writer,
                    "if_match": self.etags,
                    "errors": tuple(sorted({404, 422} | ({409} if forced else set())
                                           | ({412} if self.etags else set()))), **declared}
        conditional = declared["if_match"]
        found = self._found

        def declare(stub):
            if forced:
                def delete(view, args, **path):
                    store, where = found(path)
                    store.delete(path[key], force=args["force"],
                                 revisions=if_match() if conditional else None, **where)
                return self._declare(stub, delete, declared, (204,),
                                     (DeleteArgsSchema, {"location": "query"}))

            def delete(view, **path):
                store, where = found(path)
                store.delete(path[key], revisions=if_match() if conditional else None, **where)
            return self._declare(stub, delete, declared, (204,))
        return declare
