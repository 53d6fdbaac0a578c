"""/webhooks: the feed's events POSTed to receivers (admins only)."""
from functools import partial

from flask import current_app, url_for
from flask.views import MethodView

from inventory.core import filtering, outbound
from inventory.core.errors import BadFilter
from inventory.http.auth import current_principal, current_scope
from inventory.http.blueprint import Blueprint
from inventory.http.csv_export import RecordColumns
from inventory.http.errors import RequestError
from inventory.http.generic import RecordList
from inventory.http.lists import list_page
from inventory.http.operations import operation
from inventory.resources.webhooks.spec import SPEC
from inventory.store import get_store
from schemas.webhooks import (
    FILTER_EXAMPLES,
    NewWebhookSchema,
    WebhookCreateSchema,
    WebhookDeliveryListArgsSchema,
    WebhookDeliveryListSchema,
    WebhookDeliverySchema,
    WebhookListSchema,
    WebhookPatchSchema,
    WebhookSchema,
)

blp = Blueprint("webhooks", __name__, path_keys=(SPEC.path_key,), url_prefix="/webhooks",
                description="Webhooks: the feed's events POSTed to receivers, signed "
                            "(Standard Webhooks). Admins only.")
listing = RecordList.of("WebhookList", WebhookListSchema, FILTER_EXAMPLES, SPEC.orderings)
_DELIVERY_COLUMNS = RecordColumns(WebhookDeliverySchema(nested=True))


def _checked(body):
    """The body with its `url` and `filter` checked (422s)."""
    if body.get("url") is not None:
        try:
            outbound.check(body["url"], current_app.config["WEBHOOK_ALLOWED_HOSTS"])
        except outbound.TargetRefused as error:
            raise RequestError(422, "body.url", str(error), body["url"]) from None
    if body.get("filter"):
        try:
            get_store().events.compile_filter(filtering.parse(body["filter"]))
        except BadFilter as error:
            raise RequestError(422, "body.filter", error.detail, body["filter"]) from None
    return body


@blp.route("")
class Webhooks(MethodView):
    @blp.arguments(listing.list_args, location="query")
    @blp.response(200, WebhookListSchema)
    @operation("listWebhooks", role="admin", errors=(422,), csv=True)
    def get(self, args):
        """List webhooks (never their secrets)"""
        return list_page("webhooks", args, get_store().webhooks.list, SPEC.orderings,
                         listing.columns, "webhooks.csv")

    # no ETag and no Idempotency-Key: the secret is answered once, never stored to replay
    @blp.arguments(WebhookCreateSchema)
    @blp.response(201, NewWebhookSchema)
    @operation("createWebhook", role="admin", secret=True, errors=(403, 422), links={
        "get": ("getWebhook", {"webhook": "$response.body#/id"}),
        "deliveries": ("listWebhookDeliveries", {"webhook": "$response.body#/id"})})
    def post(self, body):
        """Make a webhook

        Every event committed from now on that it may see (its organization's,
        for a scoped admin's) and that matches `filter` is POSTed to `url`,
        signed as Standard Webhooks says. The answer holds the signing secret,
        this once (`Cache-Control: no-store`)."""
        record, secret = get_store().webhooks.create(_checked(body), current_principal().name,
                                                     current_scope())
        location = url_for(".Webhook", webhook=record["id"], _external=True)
        return {**record, "secret": secret}, 201, {"Location": location}


@blp.route("/<webhook>")
class Webhook(MethodView):
    @blp.response(200, WebhookSchema)
    @operation("getWebhook", role="admin", errors=(404, 422))
    def get(self, webhook):
        """Read a webhook (never its secret)"""
        return get_store().webhooks.get(webhook, current_scope())

    @blp.arguments(WebhookPatchSchema, required=False)
    @blp.response(200, WebhookSchema)
    @operation("updateWebhook", role="admin", errors=(404, 410, 422))
    def patch(self, changes, webhook):
        """Change a webhook

        `url`, `filter`, `description`, `active`. Set `active` to true to
        resume an inactive webhook where it stopped (410 when the feed no
        longer keeps that point)."""
        return get_store().webhooks.update(webhook, _checked(changes), current_principal().name,
                                           current_scope())

    @blp.response(204)
    @operation("deleteWebhook", role="admin", errors=(404, 422))
    def delete(self, webhook):
        """Delete a webhook and its delivery log"""
        get_store().webhooks.delete(webhook, scope=current_scope())


@blp.route("/<webhook>/deliveries")
class WebhookDeliveries(MethodView):
    @blp.arguments(WebhookDeliveryListArgsSchema, location="query")
    @blp.response(200, WebhookDeliveryListSchema)
    @operation("listWebhookDeliveries", role="admin", errors=(404, 422), csv=True)
    def get(self, args, webhook):
        """List a webhook's recent delivery attempts, newest first"""
        store = get_store().webhooks
        key = store.get_doc(webhook, current_scope())["_id"]
        return list_page(f"webhooks/{key}/deliveries", args, partial(store.deliveries_page, key),
                         None, _DELIVERY_COLUMNS, f"webhooks-{key}-deliveries.csv")
