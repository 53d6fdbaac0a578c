"""What every console page shares: its declaration (a page is an operation,
so the gate applies the API's layers to it), the headers that confine it to
the service's own files, form tokens, safe `next=` targets, the error page,
and the helpers its templates use."""
import hmac
import json
import logging
from datetime import datetime, timezone
from urllib.parse import unquote, urlsplit

from flask import Blueprint, g, redirect, render_template, request, url_for
from flask.views import MethodView
from markupsafe import Markup
from werkzeug.exceptions import Forbidden, HTTPException, NotFound

from inventory.core import errors
from inventory.core.roles import allows
from inventory.http.auth import SESSION_COOKIE, current_scope
from inventory.http.errors import headers_of, status_of
from inventory.http.operations import Operation
from inventory.store import get_store

log = logging.getLogger("inventory")

blp = Blueprint("ui", __name__, url_prefix="/ui", template_folder="templates",
                static_folder="static", static_url_path="/assets")

# Only the service's own files run or style a page: no inline script or
# style, no other origin, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; font-src 'self'; form-action 'self'; base-uri 'none'; "
    "frame-ancestors 'none'")

OVERVIEW = "/ui/"
CLUSTER_PATH = "/ui/clusters/"  # + a name: rows link so, not through url_for each
FORM_TOKEN_FIELD = "form_token"
# The console's menu after the overview: (place, title, path, role) of each
# declared list (inventory/ui/declared.py), in their places' order.
MENU = []


def page(rule, role="reader", methods=("GET",)):
    """Declare the decorated function as the console page at `/ui{rule}`
    for `methods`, called by a signed-in caller of at least `role` (None:
    open, the sign-in only). Each becomes an operation `console.<name>`
    with `page=True`: the gate authenticates, rate limits and scopes it as
    any operation; the API's document leaves it out."""
    def decorator(function):
        declaration = Operation(f"console.{function.__name__}", role, page=True)

        def handle(view, **path):
            return function(**path)
        handle.operation = declaration
        view_class = type(function.__name__, (MethodView,),
                          {method.lower(): handle for method in methods})
        blp.add_url_rule(rule, view_func=view_class.as_view(function.__name__),
                         methods=list(methods))
        return function
    return decorator


def passage():
    return g.passage


def principal():
    return g.get("principal")


def form_token():
    """The form token of the caller's session (every form that changes
    anything carries it), or None for a caller without one."""
    session = passage().session
    return session["form_token"] if session else None


@blp.before_request
def check_form_token():
    """A POST (every page that changes anything) carries its session's form
    token: a page of another site cannot post in the caller's name. The
    sign-in, which has no session yet, checks its own (views.sign_in)."""
    if request.method != "POST" or request.endpoint == "ui.sign_in":
        return
    expected, sent = form_token(), request.form.get(FORM_TOKEN_FIELD, "")
    if not expected or not hmac.compare_digest(expected.encode(), sent.encode()):
        raise Forbidden("This form is out of date or was not sent from this console: "
                        "reload the page and try again.")


@blp.after_request
def confine(response):
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["X-Frame-Options"] = "DENY"
    if request.endpoint != "ui.static":
        response.headers["Cache-Control"] = "no-store"  # pages hold the caller's data
    return response


def safe_next(target):
    """`target` if it is a path of the console, else the overview: a link
    that signs in can lead nowhere else (no scheme, host, `//`, backslash,
    dot segment or control character, percent-encoded or not)."""
    if not isinstance(target, str) or not target or len(target) > 2000:
        return OVERVIEW
    for text in (target, unquote(target)):
        if "\\" in text or "//" in text or any(ord(c) < 32 or ord(c) == 127 for c in text):
            return OVERVIEW
        parts = urlsplit(text)
        if parts.scheme or parts.netloc:
            return OVERVIEW
        if not (parts.path == "/ui" or parts.path.startswith("/ui/")):
            return OVERVIEW
        if any(segment in (".", "..") for segment in parts.path.split("/")):
            return OVERVIEW
    return target


def form_errors(error):
    """{field: message} of a form's refused values: a schema's
    ValidationError (its nested messages joined) or the store's InvalidField."""
    if isinstance(error, errors.InvalidField):
        return {error.field or "form": error.message}
    return {name: " ".join(_messages(messages)) for name, messages in error.messages.items()}


def _messages(messages):
    if isinstance(messages, dict):
        for key, inner in messages.items():
            for message in _messages(inner):
                yield f"{key}: {message}"
    elif isinstance(messages, (list, tuple)):
        for inner in messages:
            yield from _messages(inner)
    else:
        yield str(messages)


def render(template, status=200, **context):
    return render_template(f"ui/{template}", **context), status


def _sign_in_redirect():
    target = request.full_path if request.method == "GET" else OVERVIEW
    return redirect(url_for("ui.sign_in", next=safe_next(target.rstrip("?"))), 303)


@blp.errorhandler(errors.ServiceError)
def service_error(error):
    if isinstance(error, errors.NotAuthenticated):
        response = _sign_in_redirect()
        if request.cookies.get(SESSION_COOKIE):  # ended, idle or revoked: forget it
            response.delete_cookie(SESSION_COOKIE, path="/")
        return response
    status = status_of(error)
    response = render_template("ui/error.html", status=status, detail=error.detail,
                               title=_TITLES.get(status, "Error"))
    return response, status, headers_of(error)  # Retry-After: a 429's, an away database's


_TITLES = {400: "Bad request", 403: "Not allowed", 404: "Not found", 405: "Method not allowed",
           409: "Conflict", 410: "Gone", 412: "Changed meanwhile", 413: "Too large",
           422: "Not valid", 429: "Too many requests", 500: "Something went wrong",
           503: "Unavailable"}


@blp.errorhandler(HTTPException)
def http_error(error):
    status = error.code or 500
    detail = error.description if status < 500 else "The server could not answer this page."
    if isinstance(error, NotFound):
        detail = "There is no such page, or it is not yours to see."
    return render_template("ui/error.html", status=status, detail=detail,
                           title=_TITLES.get(status, "Error")), status


@blp.errorhandler(Exception)
def unexpected(error):
    if isinstance(error, HTTPException):
        return http_error(error)
    log.exception("unhandled error on %s %s", request.method, request.path)
    return render_template("ui/error.html", status=500, title=_TITLES[500],
                           detail="The server could not answer this page."), 500


# Templates' helpers: times in UTC with their age.

def _as_datetime(value):
    if value is None or value == "":
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, timezone.utc)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(timezone.utc)
    except ValueError:
        return None


def age(moment, now=None):
    """`3 days ago`, `in 2 months`: how far `moment` is from now, roughly."""
    seconds = ((now or datetime.now(timezone.utc)) - moment).total_seconds()
    ahead, seconds = seconds < 0, abs(seconds)
    for unit, size in (("year", 365 * 86400), ("month", 30 * 86400), ("day", 86400),
                       ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            text = f"{count} {unit}{'s' if count != 1 else ''}"
            return f"in {text}" if ahead else f"{text} ago"
    return "just now"


@blp.app_template_filter("shown")
def shown(value):
    """A changed field's old or new value as text: `(none)` for null, JSON
    for a list or an object."""
    if value is None:
        return "(none)"
    if isinstance(value, (dict, list, bool)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


_TIME = '<time datetime="{}">{}</time> <span class="age">({})</span>'


@blp.app_template_filter("when")
def when(value):
    """A time as `<time>` in UTC with its age, or `never` (made of the
    parsed time's own digits: nothing of the input is copied)."""
    moment = _as_datetime(value)
    if moment is None:
        return Markup('<span class="none">never</span>')
    return Markup(_TIME.format(moment.strftime("%Y-%m-%dT%H:%M:%SZ"),
                               moment.strftime("%Y-%m-%d %H:%M UTC"), age(moment)))


@blp.app_template_filter("on_day")
def on_day(value):
    """A day `YYYY-MM-DD` as `<time>` with its age, or `not known`."""
    moment = _as_datetime(f"{value}T00:00:00+00:00") if value else None
    if moment is None:
        return Markup('<span class="none">not known</span>')
    shown = moment.strftime("%Y-%m-%d")
    return Markup(_TIME.format(shown, shown, age(moment)))


@blp.app_template_global("organization_title")
def organization_title(organization_id):
    """The title of the organization `organization_id` names, as the caller
    may see it (None: none such, or not theirs): pages show names, not ids.
    One keyed read per organization a page names, kept for the request."""
    if not organization_id:
        return None
    titles = g.setdefault("organization_titles", {})
    if organization_id not in titles:
        try:
            titles[organization_id] = get_store().organizations.get(
                organization_id, current_scope())["title"]
        except errors.NotFound:
            titles[organization_id] = None
    return titles[organization_id]


@blp.app_context_processor
def page_context():
    if not request.blueprints or request.blueprints[0] != "ui":
        return {}
    current, caller = g.get("passage"), g.get("principal")
    return {"caller": caller, "cluster_path": CLUSTER_PATH,
            "menu": [(title, path) for _, title, path, role in MENU
                     if caller is not None and allows(caller.role, role)],
            "form_token": current.session["form_token"] if current is not None
            and current.session else None}
