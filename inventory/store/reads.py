"""Reading a resource's records in the caller's organization scope: a
scoped caller passes `scope` (its organization's id), and every read then
matches only that organization's live records, in the query itself, so that
others' records do not exist for it and pages stay full. A nested resource's
records are read under one parent (`under`: what their `parent_field` holds
of it), the parent having been found in the caller's scope first.

`ScopedReads` is this part of a resource store (inventory.store.base)."""
from inventory.core.errors import NotFound
from inventory.store import pages
from inventory.store.pages import all_of
from inventory.store.records import LIVE


class ScopedReads:
    """The reads of one resource's live records, in a caller's scope."""

    scope_field = None  # the stored field holding the owning organization's id

    @property
    def shown(self):
        """What reads records to show them: on the embedded store, reads that
        hand out the stored documents uncopied (`to_api` copies what it
        keeps); pymongo's documents are the caller's own already. Asked of
        the class: a pymongo collection answers any attribute it lacks with
        a sub-collection of that name."""
        collection = self.collection
        return collection.uncopied if hasattr(type(collection), "uncopied") else collection

    def scope_filter(self, scope):
        return {self.scope_field: scope} if scope is not None else {}

    def match(self, key, scope=None, live=True, under=None):
        """The live record at `key` (or any, marked too), if the scope reaches
        it; with `under` (a nested child's `parent_value`), only among that
        parent's children."""
        # all_of, not a merged dict: a scope on `_id` must not replace the key
        found = self.key_filter(key) if under is None else self.key_under(under, key)
        return all_of(found, LIVE if live else None, self.scope_filter(scope))

    def find_doc(self, key, scope=None, shown=False, under=None):
        """The stored document of the live record at `key`, or None; `shown`:
        read to be shown (`to_api`), not changed (`self.shown`); `under`: of
        a nested child, its parent's `parent_value`."""
        return (self.shown if shown else self.collection).find_one(
            self.match(key, scope, under=under))

    def get_doc(self, key, scope=None, shown=False, under=None):
        doc = self.find_doc(key, scope, shown, under)
        if doc is None:
            raise NotFound(self.not_found(key, under))
        return doc

    def not_found(self, key, under=None):
        """What a NotFound of the record at `key` (`under` a parent) says."""
        if under is None:
            return f"No {self.kind} {key!r}."
        return f"No {self.kind} {key!r} of this {self.parent_store.kind}."

    def get(self, key, scope=None):
        return self.to_api(self.get_doc(key, scope, shown=True))

    def list(self, request):
        """The page `request` (an inventory.store.pages.PageRequest) asks for."""
        return pages.walk(self.shown, request,
                          self.to_answer if request.answered else self.to_api,
                          field=self.order_field(request.ordering),
                          query=self.compile_filter(request.tree, request.now),
                          scope_query=self.scope_filter(request.scope), visible=LIVE)

    def compile_filter(self, tree, now=None):
        return self.filter_compiler.compile(tree, now) if tree is not None else {}

    # -- under a parent (a nested resource: `spec.nested`) --------------------

    def list_under(self, under, request):
        """The page `request` asks for of the records under one parent."""
        return pages.walk(self.shown, request,
                          self.to_answer if request.answered else self.to_api,
                          field=self.order_field(request.ordering),
                          query=self.compile_filter(request.tree, request.now),
                          scope_query={self.spec.parent_field: under}, visible=LIVE)

    def get_under(self, under, key):
        """The record at `key` under one parent."""
        return self.to_api(self.get_doc(key, shown=True, under=under))
