"""A child resource declared only in these tests, under every resource that
can be a parent: its spec, a store of a few lines and views written as the
checklist says (docs/development/adding-a-resource.md, step 4) are all it
takes to be served, listed, paged, scoped, published in the feed, refused
with 409 and cascaded with its parent. What the service derives from a spec, checked on one it never saw."""
import re
from functools import partial

import pytest
from flask import url_for
from flask.views import MethodView
from marshmallow import Schema, fields

from inventory import resources
from inventory.core.errors import HasChildren, NotFound
from inventory.core.ordering import Orderings
from inventory.core.spec import PathKey, ResourceSpec
from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.conditional import if_match, read, with_etag
from inventory.http.generic import RecordList, under
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.store import get_store
from inventory.store.base import ResourceStore
from schemas.common import PaginationSchema
from tests.conftest import ADMIN_TOKEN, ClosingClient, client_with, make_config

# The resources a child is declared under here (those a test can make through the API)
PARENTS = ("organizations", "platforms", "clusters")
WIDGET = PathKey("gizmo", "The gizmo's name.", "a gizmo name", (re.compile(r"^w[0-9a-z-]*$"),),
                 32, "w")


def _declared(parent_name):
    """(spec, store class, blueprint) of a `gizmos` child of `parent_name`."""
    parent = next(spec for spec in resources.SPECS if spec.name == parent_name)
    stem = "".join(part.title() for part in parent.name.split("_"))
    spec = ResourceSpec(
        name=f"gizmos_of_{parent.name}", kind="gizmo", path="gizmos", nested=True,
        parent=parent.name, parent_field="parent",
        # a cluster's children hold its id (as scans do); the others its key
        parent_holds="id" if parent.name == "clusters" else "key",
        path_key=WIDGET, event_kind=f"{parent.name}gizmo",
        filter_fields={"name": "string", "title": "string"},
        orderings=Orderings.of("name", "title"),
        indexes=(((("parent", 1), ("_id", 1)), {}),))

    declared = spec

    class GizmoStore(ResourceStore):
        spec = declared
        key_field = "name"
        scope_field = "organization"
        immutable_fields = ("name",)

        def create_under(self, parent_key, body, principal, scope=None):
            found = self.parent_store.get_doc(parent_key, scope)
            under = self.parent_value(found)
            # a gizmo's name is unique among its parent's only
            doc = {"_id": self.child_id(under, body["name"]), "name": body["name"],
                   "title": body.get("title", ""),
                   "parent": under,
                   "organization": self.parent_store.owner(found), **self.audit_new(principal)}
            self.insert_under(doc, self.parent_store, found, NotFound("Its parent went away."))
            return self.to_api(doc)
    record = type(f"{stem}GizmoSchema", (Schema,), {
        "name": fields.String(required=True), "title": fields.String(),
        "parent": fields.String(), "organization": fields.String(allow_none=True)})
    create_schema = type(f"{stem}GizmoCreateSchema", (Schema,), {
        "name": fields.String(required=True), "title": fields.String()})
    patch_schema = type(f"{stem}GizmoPatchSchema", (Schema,), {"title": fields.String()})
    list_schema = type(f"{stem}GizmoListSchema", (Schema,), {
        "results": fields.List(fields.Nested(record)),
        "pagination": fields.Nested(PaginationSchema)})

    # the views, written as adding-a-resource.md's step 4 says a nested child's are
    blp = Blueprint(f"gizmos_of_{parent.name}", __name__, path_keys=(parent.path_key, WIDGET),
                    url_prefix=f"/{parent.path}")
    name, key = f"{stem}Gizmo", parent.path_key.name
    listing = RecordList.of(f"{name}List", list_schema, ['name = "w1"'], spec.orderings)

    def stores():
        store = get_store()
        return getattr(store, parent.name), getattr(store, spec.name)

    @blp.route(f"/<{key}>/gizmos")
    class Gizmos(MethodView):
        @blp.arguments(listing.list_args, location="query")
        @blp.response(200, list_schema)
        @operation(f"list{name}s", role="reader", errors=(404, 422), csv=True)
        def get(self, args, **path):
            """List the gizmos of a record"""
            parents, gizmos = stores()
            found = under(parents, gizmos, path[key])
            return list_page(f"{parent.path}/{found}/gizmos", args,
                             partial(gizmos.list_under, found), spec.orderings, listing.columns,
                             f"{parent.path}-{path[key]}-gizmos.csv")

        @blp.arguments(create_schema)
        @blp.response(201, record)
        @operation(f"create{name}", role="writer", etag=True, idempotency_key=True,
                   errors=(404, 422))
        def post(self, body, **path):
            """Make a gizmo"""
            made = stores()[1].create_under(path[key], body, current_principal().name,
                                            current_scope())
            location = url_for(".Gizmo", **path, gizmo=made["name"], _external=True)
            return with_etag(made, 201, {"Location": location})

    @blp.route(f"/<{key}>/gizmos/<gizmo>")
    class Gizmo(MethodView):
        @blp.response(200, record)
        @operation(f"get{name}", role="reader", if_none_match=True, etag=True, errors=(404, 422))
        def get(self, gizmo, **path):
            """Read a gizmo"""
            parents, gizmos = stores()
            return read(gizmos.get_under(under(parents, gizmos, path[key]), gizmo))

        @blp.arguments(patch_schema, required=False)
        @blp.response(200, record)
        @operation(f"update{name}", role="writer", if_match=True, etag=True,
                   errors=(404, 409, 412, 422))
        def patch(self, changes, gizmo, **path):
            """Change a gizmo"""
            parents, gizmos = stores()
            found = under(parents, gizmos, path[key])
            return with_etag(gizmos.update(gizmo, changes, current_principal().name,
                                           revisions=if_match(), under=found))

        @blp.response(204)
        @operation(f"delete{name}", role="writer", if_match=True, errors=(404, 412, 422))
        def delete(self, gizmo, **path):
            """Delete a gizmo"""
            parents, gizmos = stores()
            found = under(parents, gizmos, path[key])
            gizmos.delete(gizmo, revisions=if_match(), under=found)
    return spec, GizmoStore, blp


DECLARED = {name: _declared(name) for name in PARENTS}


@pytest.fixture
def app(monkeypatch):
    """The service with every synthetic child declared beside the real resources."""
    from app import create_app
    store_classes, blueprints = resources.store_classes, resources.blueprints
    monkeypatch.setattr(resources, "store_classes", lambda: [
        *store_classes(), *((spec, store) for spec, store, _ in DECLARED.values())])
    monkeypatch.setattr(resources, "blueprints", lambda: [
        *blueprints(), *(blp for _, _, blp in DECLARED.values())])
    app = create_app(make_config())
    app.test_client_class = ClosingClient
    return app


def _parent(inventory, parent_name):
    """A new record of `parent_name`: (its key in paths, its record)."""
    if parent_name == "organizations":
        org = inventory.org()
        return org["id"], org
    if parent_name == "platforms":
        platform = inventory.platform()
        return platform["name"], platform
    cluster = inventory.cluster()
    return cluster["name"], cluster


def _parent_path(parent_name, key):
    spec = next(spec for spec in resources.SPECS if spec.name == parent_name)
    return f"/{spec.path}/{key}"


@pytest.mark.parametrize("parent_name", PARENTS)
def test_a_child_is_made_read_changed_listed_and_deleted_under_its_parent(
        client, inventory, store, parent_name):
    key, _ = _parent(inventory, parent_name)
    base = f"{_parent_path(parent_name, key)}/gizmos"
    made = client.post(base, json={"name": f"w1-{parent_name}", "title": "one"})
    assert made.status_code == 201, made.get_json()
    assert made.headers["Location"].endswith(f"{base}/w1-{parent_name}") and made.headers["ETag"]
    item = f"{base}/w1-{parent_name}"
    read = client.get(item)
    assert read.status_code == 200 and read.get_json()["title"] == "one"
    assert client.get(item, headers={"If-None-Match": read.headers["ETag"]}).status_code == 304
    changed = client.patch(item, json={"title": "uno"}, headers={"If-Match": read.headers["ETag"]})
    assert changed.status_code == 200 and changed.get_json()["title"] == "uno"
    stale = client.patch(item, json={"title": "x"}, headers={"If-Match": read.headers["ETag"]})
    assert stale.status_code == 412
    assert [w["name"] for w in client.get(base).get_json()["results"]] == [f"w1-{parent_name}"]
    assert client.delete(item).status_code == 204
    assert client.get(item).status_code == 404
    unknown = DECLARED[parent_name][0]  # a well-formed key of no record
    absent = _parent_path(parent_name, next(
        s for s in resources.SPECS if s.name == unknown.parent).path_key.example)
    assert client.get(f"{absent}/gizmos").status_code == 404


@pytest.mark.parametrize("parent_name", PARENTS)
def test_a_childs_key_is_its_own_under_each_parent_and_found_under_no_other(
        client, inventory, store, parent_name):
    """The same child key under two parents: two records, each read, changed
    and deleted under its own parent only; under the other one, or a parent
    without it, the child is not there (404), and nothing changes."""
    first, second, bare = (_parent(inventory, parent_name)[0] for _ in range(3))
    bases = {key: f"{_parent_path(parent_name, key)}/gizmos" for key in (first, second, bare)}
    for key, title in ((first, "first"), (second, "second")):
        made = client.post(bases[key], json={"name": "wsame", "title": title})
        assert made.status_code == 201, made.get_json()
    assert client.post(bases[first], json={"name": "wsame"}).status_code == 409
    assert client.post(bases[first], json={"name": "wonly"}).status_code == 201

    def title(key):
        return client.get(f"{bases[key]}/wsame").get_json()["title"]
    assert (title(first), title(second)) == ("first", "second")
    for wrong in (f"{bases[bare]}/wsame", f"{bases[second]}/wonly"):
        assert client.get(wrong).status_code == 404
        assert client.patch(wrong, json={"title": "x"}).status_code == 404
        assert client.delete(wrong).status_code == 404
    assert client.get(f"{bases[first]}/wonly").get_json()["title"] == ""

    changed = client.patch(f"{bases[second]}/wsame", json={"title": "changed"})
    assert changed.status_code == 200 and changed.get_json()["title"] == "changed"
    assert (title(first), title(second)) == ("first", "changed")
    read = client.get(f"{bases[first]}/wsame")
    stale = client.patch(f"{bases[second]}/wsame", json={"title": "y"},
                         headers={"If-Match": read.headers["ETag"]})
    assert stale.status_code == 412  # the first's ETag is not the second's
    assert client.delete(f"{bases[first]}/wsame").status_code == 204
    assert client.get(f"{bases[first]}/wsame").status_code == 404
    assert title(second) == "changed"
    assert client.delete(f"{bases[first]}/wsame").status_code == 404
    assert [w["name"] for w in client.get(bases[second]).get_json()["results"]] == ["wsame"]
    assert client.get(bases[second], query_string={"filter": 'name = "wsame"'}
                      ).get_json()["results"][0]["title"] == "changed"
    spec = DECLARED[parent_name][0]
    subjects = {event["subject"] for event in store.events.collection.find(
        {"type": {"$in": [f"{spec.event_kind}.updated", f"{spec.event_kind}.deleted"]}})}
    assert subjects == {f"{bases[second]}/wsame", f"{bases[first]}/wsame"}


@pytest.mark.parametrize("parent_name", PARENTS)
def test_a_childs_events_name_it_under_its_parent(client, inventory, store, parent_name):
    key, _ = _parent(inventory, parent_name)
    base = f"{_parent_path(parent_name, key)}/gizmos"
    assert client.post(base, json={"name": f"we-{parent_name}"}).status_code == 201
    spec = DECLARED[parent_name][0]
    (event,) = store.events.collection.find({"type": f"{spec.event_kind}.created"})
    assert event["subject"] == f"{base}/we-{parent_name}"


@pytest.mark.parametrize("parent_name", PARENTS)
def test_a_childs_list_pages_in_its_declared_orders(client, inventory, parent_name):
    key, _ = _parent(inventory, parent_name)
    base = f"{_parent_path(parent_name, key)}/gizmos"
    names = [f"gp{i}-{parent_name}" for i in range(5)]
    for i, name in enumerate(names):
        assert client.post(base, json={"name": name, "title": str(9 - i)}).status_code == 201
    other, _ = _parent(inventory, parent_name)  # another parent's children are not listed
    assert client.post(f"{_parent_path(parent_name, other)}/gizmos",
                       json={"name": f"wq-{parent_name}"}).status_code == 201
    for order, expected in (("name", names), ("title", names[::-1])):
        seen, token = [], ""
        while True:
            page = client.get(base, query_string={"limit": 2, "order_by": order,
                                                  **({"continue": token} if token else {})})
            assert page.status_code == 200, page.get_json()
            seen += [w["name"] for w in page.get_json()["results"]]
            token = page.get_json()["pagination"]["continue"]
            if not token:
                break
        assert seen == expected
    filtered = client.get(base, query_string={"filter": f'name = "{names[2]}"'}).get_json()
    assert [w["name"] for w in filtered["results"]] == [names[2]]


@pytest.mark.parametrize("parent_name", PARENTS)
def test_a_child_is_seen_only_in_its_parents_organization(app, client, inventory, parent_name):
    key, record = _parent(inventory, parent_name)
    base = f"{_parent_path(parent_name, key)}/gizmos"
    assert client.post(base, json={"name": f"ws-{parent_name}"}).status_code == 201
    own_org = record["id"] if parent_name == "organizations" else record["organization"]
    outsider_org = inventory.org()["id"]
    tokens = {org: client.post("/tokens", json={"name": "t", "role": "writer",
                                                "organization": org}).get_json()["token"]
              for org in (own_org, outsider_org)}
    insider, outsider = client_with(app, tokens[own_org]), client_with(app, tokens[outsider_org])
    assert [w["name"] for w in insider.get(base).get_json()["results"]] == [f"ws-{parent_name}"]
    assert insider.get(f"{base}/ws-{parent_name}").status_code == 200
    for answer in (outsider.get(base), outsider.get(f"{base}/ws-{parent_name}"),
                   outsider.post(base, json={"name": f"wz-{parent_name}"}),
                   outsider.patch(f"{base}/ws-{parent_name}", json={"title": "theirs"}),
                   outsider.delete(f"{base}/ws-{parent_name}")):
        assert answer.status_code == 404
    assert insider.get(f"{base}/ws-{parent_name}").get_json()["title"] == ""
    assert insider.patch(f"{base}/ws-{parent_name}", json={"title": "ours"}).status_code == 200
    assert insider.delete(f"{base}/ws-{parent_name}").status_code == 204


@pytest.mark.parametrize("parent_name", PARENTS)
def test_a_parent_with_children_refuses_an_unforced_delete_and_cascades_a_forced_one(
        client, inventory, store, parent_name):
    key, _ = _parent(inventory, parent_name)
    base = f"{_parent_path(parent_name, key)}/gizmos"
    for i in range(3):
        assert client.post(base, json={"name": f"wd{i}-{parent_name}"}).status_code == 201
    parents, children = getattr(store, parent_name), DECLARED[parent_name][0].name
    with pytest.raises(HasChildren):
        parents.delete(key)
    assert getattr(store, children).collection.count_documents({}) == 3
    parents.delete(key, force=True)
    assert getattr(store, children).collection.count_documents({}) == 0
    assert client.get(_parent_path(parent_name, key)).status_code == 404


def test_the_document_describes_every_child_as_its_declaration_says(app):
    document = client_with(app, ADMIN_TOKEN).get("/openapi.json").get_json()
    for parent_name, (spec, _, _) in DECLARED.items():
        parent = next(s for s in resources.SPECS if s.name == parent_name)
        path = f"/{parent.path}/{{{parent.path_key.name}}}/gizmos"
        assert set(document["paths"][path]) >= {"get", "post"}
        assert set(document["paths"][f"{path}/{{gizmo}}"]) >= {"get", "patch", "delete"}
        assert "404" in document["paths"][path]["get"]["responses"]
