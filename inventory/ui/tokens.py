"""The tokens' console page, for admins, declared
(inventory/ui/declared.py): the list with a Revoke button on each row, and
above it the form that makes a token, whose secret that answer shows once."""
from flask import redirect, request, url_for
from marshmallow import ValidationError

import schemas.tokens
from inventory.core.errors import InvalidField
from inventory.http.auth import current_scope
from inventory.resources.tokens import views as token_views
from inventory.resources.tokens.spec import SPEC as TOKENS
from inventory.store import get_store
from inventory.ui.declared import Column, Declared, declare, of
from inventory.ui.pages import form_errors, page, principal

FORM_FIELDS = ("name", "role", "organization")

TOKEN_PAGES = declare(Declared(
    spec=TOKENS, views=token_views.listing, title="Tokens", singular="Token", role="admin",
    menu=60, filter_example='role="admin"', list_template="tokens.html",
    columns=(Column("Name", of("name"), sort="name"), Column("Role", of("role")),
             Column("Organization", of("organization"), "organization"),
             Column("Created", of("created_on"), "when", sort="created_on"),
             Column("Last used", of("last_used_on"), "when"))))


@page("/tokens", role="admin", methods=("POST",))
def token_create():
    """Make a token: the answer is the tokens' page showing its secret, once."""
    form = {name: request.form.get(name, "").strip() for name in FORM_FIELDS}
    body = {name: form[name] for name in ("name", "role")}
    if form["organization"]:
        body["organization"] = form["organization"]
    try:
        record, secret = get_store().tokens.create(
            schemas.tokens.TokenCreateSchema().load(body), principal().name, current_scope())
    except (ValidationError, InvalidField) as error:
        return TOKEN_PAGES.list_page(422, created=None, errors=form_errors(error), form=form)
    return TOKEN_PAGES.list_page(201, created={**record, "token": secret}, errors={}, form={})


@page("/tokens/<id>/revoke", role="admin", methods=("POST",))
def token_revoke(id):  # noqa: A002 (the tokens' path key is `id`)
    store = get_store()
    store.tokens.revoke(id, scope=current_scope())
    store.sessions.end_all_of(id)  # (refused already: a session reads its token each time)
    return redirect(url_for(TOKEN_PAGES.endpoints["list"]), 303)
