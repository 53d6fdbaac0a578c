"""The console (/ui/): sign-in, sessions, form tokens, `next=`, the headers
that confine a page, and the API's rules (roles, scope, rate limits) applied
to its callers."""
import re
from datetime import datetime, timedelta, timezone

import pytest

from inventory.store import sessions as session_store
from tests.conftest import ADMIN_TOKEN, REAL_MONGO, make_config

FORM_TOKEN = re.compile(r'name="form_token" value="([^"]+)"')


def sign_in(app, token, next_=None, client=None):
    """A test client signed in to the console with `token` (not sending it again)."""
    client = client or app.test_client()
    form = client.get("/ui/sign-in")
    data = {"form_token": FORM_TOKEN.search(form.get_data(as_text=True)).group(1),
            "token": token}
    if next_ is not None:
        data["next"] = next_
    response = client.post("/ui/sign-in", data=data)
    assert response.status_code == 303, response.get_data(as_text=True)
    client.last_sign_in = response
    return client


def form_token(client, path="/ui/"):
    return FORM_TOKEN.search(client.get(path).get_data(as_text=True)).group(1)


def new_token(client, role="reader", organization=None):
    body = {"name": f"t-{role}", "role": role}
    if organization:
        body["organization"] = organization
    response = client.post("/tokens", json=body)
    assert response.status_code == 201
    return response.get_json()


def test_a_page_redirects_to_sign_in_when_signed_out(anonymous):
    response = anonymous.get("/ui/clusters?filter=x")
    assert response.status_code == 303
    assert response.headers["Location"].startswith("/ui/sign-in?next=")
    page = anonymous.get("/ui/sign-in")
    text = page.get_data(as_text=True)
    assert '<label for="token">Token</label>' in text and ">Sign in</button>" in text
    assert "<title>Sign in" in text


def test_the_session_cookie_holds_no_token_and_is_confined(app):
    client = sign_in(app, ADMIN_TOKEN)
    cookie = next(value for value in client.last_sign_in.headers.getlist("Set-Cookie")
                  if value.startswith("inventory_session="))
    assert ADMIN_TOKEN not in cookie
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # plain http here
    secure = app.test_client()
    form = secure.get("/ui/sign-in", base_url="https://localhost")
    https = secure.post("/ui/sign-in", base_url="https://localhost", data={
        "token": ADMIN_TOKEN,
        "form_token": FORM_TOKEN.search(form.get_data(as_text=True)).group(1)})
    cookie = next(value for value in https.headers.getlist("Set-Cookie")
                  if value.startswith("inventory_session="))
    assert "Secure" in cookie
    assert client.get("/ui/").status_code == 200


def test_a_wrong_token_or_a_forged_form_does_not_sign_in(app, anonymous):
    form = anonymous.get("/ui/sign-in")
    token = FORM_TOKEN.search(form.get_data(as_text=True)).group(1)
    wrong = anonymous.post("/ui/sign-in", data={"form_token": token, "token": "inv_nope"})
    assert wrong.status_code == 401
    assert "unknown or revoked" in wrong.get_data(as_text=True)
    assert not any(c.startswith("inventory_session=") for c in wrong.headers.getlist("Set-Cookie"))
    other = app.test_client()  # no sign-in form's cookie: a post from another site
    forged = other.post("/ui/sign-in", data={"form_token": token, "token": ADMIN_TOKEN})
    assert forged.status_code == 403
    assert other.get("/ui/").status_code == 303


def test_every_page_is_confined_by_its_headers(app):
    client = sign_in(app, ADMIN_TOKEN)
    for path in ("/ui/", "/ui/clusters", "/ui/sign-in", "/ui/nowhere", "/ui/clusters/nope"):
        response = client.get(path)
        policy = response.headers["Content-Security-Policy"]
        assert "default-src 'none'" in policy and "script-src 'self'" in policy
        assert "frame-ancestors 'none'" in policy and "unsafe-inline" not in policy
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Cache-Control"] == "no-store"
        text = response.get_data(as_text=True)
        assert "<script>" not in text and "style=" not in text and "<style" not in text
    asset = client.get("/ui/assets/console.js")
    assert asset.status_code == 200 and asset.mimetype == "text/javascript"


def test_a_form_without_its_token_changes_nothing(app, client, inventory):
    inventory.cluster(name="kept")
    signed = sign_in(app, ADMIN_TOKEN)
    edit = signed.get("/ui/clusters/kept/edit").get_data(as_text=True)
    revision = re.search(r'name="revision" value="([^"]+)"', edit).group(1)
    data = {"environment": "staging", "version": "1.31.2", "title": "", "description": "",
            "endpoint": "", "labels": "", "revision": revision}
    refused = signed.post("/ui/clusters/kept/edit", data=data)
    assert refused.status_code == 403
    refused = signed.post("/ui/clusters/kept/edit", data={**data, "form_token": "guess"})
    assert refused.status_code == 403
    assert client.get("/kubeclusters/kept").get_json()["environment"] == "production"
    assert signed.post("/ui/sign-out").status_code == 403  # sign-out too
    assert signed.get("/ui/").status_code == 200


def test_no_get_changes_anything(app, client):
    signed = sign_in(app, ADMIN_TOKEN)
    token = new_token(client)
    for path in ("/ui/sign-out", f"/ui/tokens/{token['id']}/revoke"):
        assert signed.get(path).status_code in (404, 405)  # no page answers a GET there
    assert signed.get("/ui/").status_code == 200
    reader = sign_in(app, token["token"])
    assert reader.get("/ui/").status_code == 200


def test_sign_out_ends_the_session_at_once(app, store):
    client = sign_in(app, ADMIN_TOKEN)
    cookie = client.get_cookie("inventory_session").value
    response = client.post("/ui/sign-out", data={"form_token": form_token(client)})
    assert response.status_code == 303 and response.headers["Location"] == "/ui/sign-in"
    again = app.test_client()
    again.set_cookie("inventory_session", cookie)  # a copy kept of the old cookie
    assert again.get("/ui/").status_code == 303
    assert store.sessions.collection.count_documents({}) == 0


def test_revoking_the_token_ends_its_sessions_at_once(app, client):
    token = new_token(client, "writer")
    signed = sign_in(app, token["token"])
    assert signed.get("/ui/clusters").status_code == 200
    assert client.delete(f"/tokens/{token['id']}").status_code == 204
    response = signed.get("/ui/clusters")
    assert response.status_code == 303 and "/ui/sign-in" in response.headers["Location"]


def test_revoking_from_the_console_signs_the_token_out(app, client, store):
    token = new_token(client)
    reader = sign_in(app, token["token"])
    admin = sign_in(app, ADMIN_TOKEN)
    response = admin.post(f"/ui/tokens/{token['id']}/revoke",
                          data={"form_token": form_token(admin)})
    assert response.status_code == 303
    assert reader.get("/ui/").status_code == 303
    assert store.sessions.collection.count_documents({"token": token["id"]}) == 0


def _naive_utc_now():
    """Now as the store keeps times: naive UTC."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def test_an_idle_session_expires(app, store, session_clock):
    client = sign_in(app, ADMIN_TOKEN)
    assert client.get("/ui/").status_code == 200
    session_clock(_naive_utc_now() + session_store.IDLE + timedelta(seconds=1))
    assert client.get("/ui/").status_code == 303
    assert store.sessions.collection.count_documents({}) == 0


def test_a_used_session_lives_on_but_not_past_its_lifetime(app, session_clock):
    client = sign_in(app, ADMIN_TOKEN)
    start = _naive_utc_now()
    for minutes in range(20, 12 * 60, 20):  # used every 20 minutes
        session_clock(start + timedelta(minutes=minutes))
        assert client.get("/ui/").status_code == 200, minutes
    session_clock(start + session_store.LIFETIME + timedelta(minutes=1))
    assert client.get("/ui/").status_code == 303


def _admin_sessions(app):
    from inventory.http.auth import BOOTSTRAP_ADMIN_KEY
    return app.extensions["inventory.store"].sessions.collection.count_documents(
        {"token": BOOTSTRAP_ADMIN_KEY})


def test_a_new_bootstrap_admin_secret_ends_the_old_ones_sessions(app):
    client = sign_in(app, ADMIN_TOKEN)
    assert client.get("/ui/").status_code == 200 and _admin_sessions(app) == 1
    app.extensions["inventory.admin_token"] = "another-admin-token"
    assert client.get("/ui/").status_code == 303
    assert _admin_sessions(app) == 0  # ended, not only refused
    app.extensions["inventory.admin_token"] = ADMIN_TOKEN  # the old secret set back
    assert client.get("/ui/").status_code == 303
    assert client.get("/events", headers={"Accept": "text/event-stream"}).status_code == 401


def test_the_release_step_ends_the_sessions_of_an_old_admin_secret_unused_since(app):
    kept, ended = sign_in(app, ADMIN_TOKEN), sign_in(app, ADMIN_TOKEN)
    app.extensions["inventory.admin_token"] = "another-admin-token"
    mine = sign_in(app, "another-admin-token")
    result = app.test_cli_runner().invoke(args=["create-indexes"])
    assert result.exit_code == 0, result.output
    assert _admin_sessions(app) == 1  # the new secret's only
    assert mine.get("/ui/").status_code == 200
    app.extensions["inventory.admin_token"] = ADMIN_TOKEN
    assert kept.get("/ui/").status_code == 303 and ended.get("/ui/").status_code == 303


@pytest.mark.skipif(REAL_MONGO, reason="the embedded store's start; on MongoDB the release "
                    "step ends them (the test above)")
def test_a_start_with_another_admin_secret_ends_the_old_ones_sessions(tmp_path):
    from app import create_app
    from inventory.config import Config

    def start(secret):
        return create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN=secret,
                                 INVENTORY_DATA_DIR=str(tmp_path)))
    first = start(ADMIN_TOKEN)
    client = sign_in(first, ADMIN_TOKEN)
    cookie = client.get_cookie("inventory_session").value
    first.extensions["inventory.store"].db.journal.close()
    start("another-admin-token").extensions["inventory.store"].db.journal.close()
    again = start(ADMIN_TOKEN)  # the old secret back, no request in between
    try:
        revived = again.test_client()
        revived.set_cookie("inventory_session", cookie)
        assert revived.get("/ui/").status_code == 303
    finally:
        again.extensions["inventory.store"].db.journal.close()


@pytest.mark.parametrize("target", [
    "//evil.com", "//evil.com/ui/", "/ui/../x", "/ui/%2e%2e/x", "https://evil", "https://evil/ui/",
    "/\\evil.com", "\\\\evil.com", "/ui\\..\\x", "/ui/\\evil", "javascript:alert(1)",
    "/uix", "/x", "ui/", "/ui/%2f%2fevil.com", "/ui/\t/x", "http:/ui/", "/ui//evil.com",
])
def test_next_leads_only_to_console_paths(app, target):
    client = sign_in(app, ADMIN_TOKEN, next_=target)
    assert client.last_sign_in.headers["Location"] == "/ui/"


def test_next_leads_back_to_the_page_asked_for(app, anonymous):
    asked = '/ui/clusters?filter=environment%3D%22production%22'
    response = anonymous.get(asked)
    target = response.headers["Location"].split("next=", 1)[1]
    from urllib.parse import unquote
    client = sign_in(app, ADMIN_TOKEN, next_=unquote(target))
    assert client.last_sign_in.headers["Location"] == asked


def test_a_label_holding_markup_is_text(app, inventory):
    inventory.cluster(name="marked", title='<script>alert("t")</script>',
                      labels={"team": "<script>alert(1)</script>"})
    client = sign_in(app, ADMIN_TOKEN)
    for path in ("/ui/clusters/marked", "/ui/clusters", "/ui/"):
        text = client.get(path).get_data(as_text=True)
        assert "<script>alert" not in text
    text = client.get("/ui/clusters/marked").get_data(as_text=True)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text


def test_a_scoped_token_sees_only_its_organization(app, client, inventory):
    acme, other = inventory.org("Acme"), inventory.org("Other")
    inventory.cluster(inventory.platform(acme["id"])["name"], name="acme-one")
    inventory.cluster(inventory.platform(other["id"])["name"], name="other-one")
    token = new_token(client, "reader", acme["id"])
    scoped = sign_in(app, token["token"])
    listed = scoped.get("/ui/clusters").get_data(as_text=True)
    assert "acme-one" in listed and "other-one" not in listed
    assert scoped.get("/ui/clusters/other-one").status_code == 404
    assert scoped.get("/ui/clusters/acme-one").status_code == 200
    overview = scoped.get("/ui/").get_data(as_text=True)
    assert "acme-one" in overview and "other-one" not in overview
    organizations = scoped.get("/ui/organizations").get_data(as_text=True)
    assert acme["id"] in organizations and other["id"] not in organizations


def test_roles_are_the_apis(app, client, inventory):
    inventory.cluster(name="ruled")
    reader = sign_in(app, new_token(client, "reader")["token"])
    assert reader.get("/ui/clusters/ruled/edit").status_code == 403
    assert reader.post("/ui/clusters/ruled/edit",
                       data={"form_token": form_token(reader)}).status_code == 403
    assert reader.get("/ui/tokens").status_code == 403
    assert reader.get("/ui/webhooks").status_code == 403
    assert "Edit" not in reader.get("/ui/clusters/ruled").get_data(as_text=True).split(
        "<main", 1)[1].split("<h2", 1)[0]
    writer = sign_in(app, new_token(client, "writer")["token"])
    assert writer.get("/ui/clusters/ruled/edit").status_code == 200
    assert writer.get("/ui/tokens").status_code == 403


def test_a_signed_in_page_counts_against_the_tokens_rate_limit():
    from app import create_app
    app = create_app(make_config(RATE_LIMIT="3 per minute"))
    admin = app.test_client()
    admin.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {ADMIN_TOKEN}"
    reader = admin.post("/tokens", json={"name": "r", "role": "reader"}).get_json()
    signed = sign_in(app, reader["token"])
    statuses = [signed.get("/ui/clusters").status_code for _ in range(4)]
    assert statuses[:3] == [200, 200, 200] and statuses[3] == 429
    # the same token over the API shares the count
    api = app.test_client()
    api.environ_base["HTTP_AUTHORIZATION"] = f"Bearer {reader['token']}"
    assert api.get("/kubeclusters").status_code == 429


def test_the_session_is_no_credential_for_the_api(app):
    client = sign_in(app, ADMIN_TOKEN)
    assert client.get("/kubeclusters").status_code == 401
    assert client.post("/organizations", json={"title": "x"}).status_code == 401


def test_the_live_list_reads_the_feed_with_its_session(app, client, inventory):
    """The overview's live list streams `GET /events` itself (one stream per
    tab, counted as the API's are); the session signs that one operation in."""
    inventory.org("Watched")
    signed = sign_in(app, ADMIN_TOKEN)
    page = signed.get("/events?limit=1")
    assert page.status_code == 200 and page.get_json()["results"]
    assert app.test_client().get("/events").status_code == 401
    token = new_token(client, "reader")
    reader = sign_in(app, token["token"])
    client.delete(f"/tokens/{token['id']}")
    assert reader.get("/events").status_code == 401


def test_signing_out_ends_the_live_lists_stream(app, client, inventory, monkeypatch):
    """A tab left open after a sign-out (in another tab) hears of no change
    made after it: its stream ends within a look (REVOCATION_CHECK_SECONDS),
    as a revoked token's does, not at the end of its time (here made 10 s);
    another session's stream goes on."""
    import time

    from inventory.resources.events import views as events_api
    monkeypatch.setattr(events_api, "STREAM_SECONDS", 10)
    token = new_token(client, "reader")["token"]
    leaving, staying = sign_in(app, token), sign_in(app, token)
    streams = [signed.get("/events", headers={"Accept": "text/event-stream"}, buffered=False)
               for signed in (leaving, staying)]
    chunks = [iter(stream.response) for stream in streams]
    assert [next(each) for each in chunks] == [b"retry: 1000\n\n"] * 2
    assert leaving.post("/ui/sign-out", data={"form_token": form_token(leaving)}).status_code == 303
    started = time.monotonic()
    b"".join(chunks[0])  # what it had to say before the sign-out, then its end
    assert time.monotonic() - started < 5
    inventory.org("After the sign-out")
    heard = b""
    while b"organization.created" not in heard:  # after the token's own event
        heard += next(chunks[1])
    for stream in streams:
        stream.close()


def test_sign_in_attempts_count_against_the_address_limit():
    from app import create_app
    app = create_app(make_config(RATE_LIMIT_ANONYMOUS="3 per minute"))
    client = app.test_client()
    page, statuses = client.get("/ui/sign-in"), []
    for _ in range(4):  # each answer's form carries a new form token
        token = FORM_TOKEN.search(page.get_data(as_text=True)).group(1)
        page = client.post("/ui/sign-in", data={"form_token": token, "token": "inv_guess"})
        statuses.append(page.status_code)
    assert statuses == [401, 401, 401, 429]
    refused = client.post("/ui/sign-in", data={"form_token": token, "token": ADMIN_TOKEN})
    assert refused.status_code == 429 and refused.headers["Retry-After"]
    assert "Too many requests" in refused.get_data(as_text=True)


def test_where_ttl_indexes_are_refused_idle_sessions_are_swept(app, store):
    from inventory.store.records import stored_now
    from inventory.store.retention import TTL_REFUSED
    store.db.settings.update_one({"_id": TTL_REFUSED}, {"$set": {"value": ["sessions"]}},
                                 upsert=True)
    sign_in(app, ADMIN_TOKEN)
    assert store.sweep_expired(stored_now() + timedelta(minutes=29)) == 0
    assert store.sweep_expired(stored_now() + session_store.IDLE + timedelta(minutes=1)) == 1
    assert store.sessions.collection.count_documents({}) == 0


def test_signing_in_again_makes_a_new_session_and_ends_the_old_one(app, store):
    client = sign_in(app, ADMIN_TOKEN)
    old = client.get_cookie("inventory_session").value
    sign_in(app, ADMIN_TOKEN, client=client)
    assert client.get_cookie("inventory_session").value != old
    assert store.sessions.collection.count_documents({}) == 1
    stale = app.test_client()
    stale.set_cookie("inventory_session", old)
    assert stale.get("/ui/").status_code == 303
