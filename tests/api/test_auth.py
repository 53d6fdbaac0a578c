"""Access control: tokens, roles, organization scope."""
import pytest

from inventory.core.errors import Unavailable
from tests.conftest import ADMIN_TOKEN, REAL_MONGO, assert_problem, client_with

UNKNOWN_ORG = "org_00000000-0000-7000-8000-000000000000"


@pytest.fixture
def make_token(client):
    def make(role, organization=None, name=None):
        response = client.post("/tokens", json={"name": name or f"{role}-bot", "role": role,
                                                "organization": organization})
        assert response.status_code == 201, response.get_json()
        return response.get_json()
    return make


@pytest.fixture
def as_role(app, make_token):
    def client_for(role, organization=None):
        return client_with(app, make_token(role, organization)["token"])
    return client_for


@pytest.fixture
def two_orgs(inventory):
    """Two organizations, each with a platform, a cluster and a scan."""
    made = {}
    for key in ("mine", "theirs"):
        org = inventory.org(title=key)
        platform = inventory.platform(org=org["id"], name=f"{key}-platform")
        cluster = inventory.cluster(platform=platform["name"], name=f"{key}-cluster",
                                    labels={"team": "core"})
        scan = inventory.scan(cluster["name"], 100)
        cluster = inventory.client.get(f"/kubeclusters/{cluster['name']}").get_json()
        made[key] = {"org": org, "platform": platform, "cluster": cluster, "scan": scan}
    return made


# -- authentication ---------------------------------------------------------

@pytest.mark.parametrize("header", [None, "", "Bearer", "Bearer ", "Basic dXNlcjpwdw==",
                                    "Token abc", "Bearer nope", "Bearer " + "x" * 5000])
def test_missing_malformed_or_unknown_token_is_401_with_challenge(app, header):
    client = app.test_client()
    headers = {} if header is None else {"Authorization": header}
    response = client.get("/organizations", headers=headers)
    assert_problem(response, 401)
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize("path", ["/healthz", "/readyz", "/openapi.json", "/docs",
                                  "/schemas/KubeCluster.json"])
def test_open_routes_need_no_token(anonymous, path):
    assert anonymous.get(path).status_code == 200


def test_token_secret_is_shown_once_and_listed_never(client, make_token):
    made = make_token("reader")
    assert made["token"].startswith("inv_") and len(made["token"]) >= 4 + 43
    listing = client.get("/tokens").get_data(as_text=True)
    assert made["token"] not in listing and '"token"' not in listing and "hash" not in listing
    record = client.get(f"/tokens/{made['id']}").get_json()
    assert "token" not in record and record["name"] == "reader-bot"


def test_tokens_are_stored_only_as_hashes(store, make_token):
    made = make_token("reader")
    doc = store.tokens.collection.find_one({"_id": made["id"]})
    assert made["token"] not in str(doc)
    assert len(doc["hash"]) == 64


def test_revocation_takes_effect_on_the_next_request(app, client, make_token):
    made = make_token("writer")
    bot = client_with(app, made["token"])
    assert bot.get("/organizations").status_code == 200
    assert client.delete(f"/tokens/{made['id']}").status_code == 204
    response = bot.get("/organizations")
    assert_problem(response, 401)
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]


def test_last_used_on_is_recorded(app, client, make_token):
    made = make_token("reader")
    assert made["last_used_on"] is None
    client_with(app, made["token"]).get("/organizations")
    assert client.get(f"/tokens/{made['id']}").get_json()["last_used_on"].endswith("Z")


@pytest.mark.parametrize("seconds_ago, rewritten", [(10, False), (50, False), (70, True),
                                                     (86_400, True)])
def test_last_used_on_is_written_at_most_once_a_minute(app, store, make_token,
                                                       seconds_ago, rewritten):
    from datetime import datetime, timedelta, timezone

    from inventory.core.ids import rfc3339
    made = make_token("reader")
    earlier = rfc3339(datetime.now(timezone.utc) - timedelta(seconds=seconds_ago))
    store.db.tokens.update_one({"_id": made["id"]}, {"$set": {"last_used_on": earlier}})
    assert client_with(app, made["token"]).get("/organizations").status_code == 200
    after = store.db.tokens.find_one({"_id": made["id"]})["last_used_on"]
    assert (after != earlier) is rewritten


def test_audit_fields_name_the_token_not_what_the_client_sent(app, as_role, inventory):
    platform = inventory.platform()
    writer = as_role("writer")
    cluster = writer.post("/kubeclusters", json={
        "name": "c", "platform": platform["name"], "environment": "dev", "version": "1.30.0",
        "created_by": "mallory", "last_modified_by": "mallory"}).get_json()
    assert cluster["created_by"] == cluster["last_modified_by"] == "writer-bot"
    changed = as_role("admin").patch("/kubeclusters/c", json={"title": "T"}).get_json()
    assert changed["created_by"] == "writer-bot" and changed["last_modified_by"] == "admin-bot"


def test_token_for_unknown_organization_is_422(client):
    assert_problem(client.post("/tokens", json={"name": "x", "role": "reader",
                                                "organization": UNKNOWN_ORG}),
                   422, "body.organization")


@pytest.mark.parametrize("body, location", [({"name": "x", "role": "root"}, "body.role"),
                                            ({"role": "reader"}, "body.name")])
def test_bad_token_body_is_422(client, body, location):
    assert_problem(client.post("/tokens", json=body), 422, location)


# -- roles: every route, every role ------------------------------------------

def routes(made):
    """(method, path, body) for every route, on records of `made`."""
    org, platform = made["org"]["id"], made["platform"]["name"]
    cluster, scan = made["cluster"]["name"], made["scan"]["id"]
    return {
        "list orgs": ("GET", "/organizations", None),
        "create org": ("POST", "/organizations", {"title": "New"}),
        "read org": ("GET", f"/organizations/{org}", None),
        "patch org": ("PATCH", f"/organizations/{org}", {"description": "d"}),
        "delete org": ("DELETE", f"/organizations/{org}?force=true", None),
        "list platforms": ("GET", "/kubeplatforms", None),
        "create platform": ("POST", "/kubeplatforms", {
            "name": "new-platform", "organization": org, "control_plane": {"provider": "aks"},
            "infrastructure": {"cloud": {"provider": "azure"}}}),
        "read platform": ("GET", f"/kubeplatforms/{platform}", None),
        "patch platform": ("PATCH", f"/kubeplatforms/{platform}", {"title": "t"}),
        "delete platform": ("DELETE", f"/kubeplatforms/{platform}?force=true", None),
        "list clusters": ("GET", "/kubeclusters", None),
        "create cluster": ("POST", "/kubeclusters", {
            "name": "new-cluster", "platform": platform, "environment": "dev", "version": "1.30"}),
        "read cluster": ("GET", f"/kubeclusters/{cluster}", None),
        "patch cluster": ("PATCH", f"/kubeclusters/{cluster}", {"title": "t"}),
        "delete cluster": ("DELETE", f"/kubeclusters/{cluster}", None),
        "list scans": ("GET", f"/kubeclusters/{cluster}/scans", None),
        "record scan": ("POST", f"/kubeclusters/{cluster}/scans", {"scanned_on": 5}),
        "read scan": ("GET", f"/kubeclusters/{cluster}/scans/{scan}", None),
        "list tokens": ("GET", "/tokens", None),
        "create token": ("POST", "/tokens", {"name": "t", "role": "reader", "organization": org}),
    }


ADMIN_ONLY = {"create org", "patch org", "delete org", "list tokens", "create token"}
READS = {"list orgs", "read org", "list platforms", "read platform", "list clusters",
         "read cluster", "list scans", "read scan"}
SUCCESS = {"GET": 200, "POST": 201, "PATCH": 200, "DELETE": 204}


def allowed(role, route):
    if route in ADMIN_ONLY:
        return role == "admin"
    return route in READS or role in ("writer", "admin")


DELETE_ORDER = ("delete cluster", "delete platform", "delete org")  # leaves before the tree


@pytest.mark.parametrize("scoped", [False, True], ids=["unscoped", "scoped"])
@pytest.mark.parametrize("role", ["reader", "writer", "admin"])
def test_role_matrix(as_role, two_orgs, role, scoped):
    """Every route for one role on one estate: deletes come last, leaves first,
    so that each route still finds what it acts on."""
    made = two_orgs["mine"]
    caller = as_role(role, made["org"]["id"] if scoped else None)
    everything = routes(made)
    order = sorted(everything, key=lambda r: DELETE_ORDER.index(r) + 1 if r in DELETE_ORDER
                   else 0)
    wrong = []
    for route in order:
        method, path, body = everything[route]
        response = caller.open(path, method=method, json=body)
        if scoped and route == "create org":
            expected = 403  # a scoped token cannot make organizations, whatever its role
        elif allowed(role, route):
            expected = SUCCESS[method]
        else:
            expected = 403
        if response.status_code != expected:
            wrong.append((route, expected, response.status_code, response.get_json()))
    assert wrong == []


# -- organization scope -------------------------------------------------------

@pytest.mark.parametrize("route", ["read org", "patch org", "delete org", "read platform",
                                   "patch platform", "delete platform", "read cluster",
                                   "patch cluster", "delete cluster", "list scans",
                                   "record scan", "read scan"])
def test_scoped_token_finds_nothing_of_another_organization(as_role, client, two_orgs, route):
    caller = as_role("admin", two_orgs["mine"]["org"]["id"])
    method, path, body = routes(two_orgs["theirs"])[route]
    assert_problem(caller.open(path, method=method, json=body), 404)
    # and nothing of theirs changed
    theirs = two_orgs["theirs"]
    assert client.get(f"/kubeclusters/{theirs['cluster']['name']}").get_json() == theirs["cluster"]
    assert len(client.get(f"/kubeclusters/{theirs['cluster']['name']}/scans").get_json()["results"]) == 1


def test_scoped_cluster_by_id_of_another_organization_is_404(as_role, two_orgs):
    caller = as_role("reader", two_orgs["mine"]["org"]["id"])
    assert_problem(caller.get(f"/kubeclusters/{two_orgs['theirs']['cluster']['id']}"), 404)


@pytest.mark.parametrize("path, key, mine", [
    ("/organizations", "id", "org"), ("/kubeplatforms", "name", "platform"),
    ("/kubeclusters", "name", "cluster")])
@pytest.mark.parametrize("flt", [None, 'title!="zzz"', "labels:team", 'NOT name="x" OR name="y"',
                                 'organization="{theirs}"', 'id="{theirs}"'])
def test_scoped_lists_show_only_the_own_organization_whatever_the_filter(
        as_role, two_orgs, path, key, mine, flt):
    caller = as_role("reader", two_orgs["mine"]["org"]["id"])
    theirs = two_orgs["theirs"]["org"]["id"]
    query = {} if flt is None else {"filter": flt.format(theirs=theirs)}
    if flt and flt.startswith("id=") and path != "/organizations":
        return  # platforms and clusters are filtered on their own ids elsewhere
    response = caller.get(path, query_string=query)
    if response.status_code == 422:  # a field this list does not have
        return
    results = response.get_json()["results"]
    assert all(r.get("organization", r.get("id")) == two_orgs["mine"]["org"]["id"]
               for r in results), results


def test_scoped_pages_are_full(app, inventory, as_role):
    mine, theirs = inventory.org()["id"], inventory.org()["id"]
    for i in range(6):  # interleave the two organizations' platforms in key order
        inventory.platform(org=mine, name=f"p{i}a")
        inventory.platform(org=theirs, name=f"p{i}b")
    caller = as_role("reader", mine)
    body = caller.get("/kubeplatforms?limit=3").get_json()
    assert [p["name"] for p in body["results"]] == ["p0a", "p1a", "p2a"]
    assert body["pagination"]["continue"]


def test_continuation_token_of_another_caller_is_422(as_role, inventory, client):
    mine = inventory.org()["id"]
    for _ in range(3):
        inventory.platform(org=mine)
    token = client.get("/kubeplatforms?limit=1").get_json()["pagination"]["continue"]
    caller = as_role("reader", mine)
    assert_problem(caller.get("/kubeplatforms", query_string={"continue": token}), 422,
                   "query.continue")


def test_scoped_token_cannot_create_into_another_organization(as_role, two_orgs):
    caller = as_role("writer", two_orgs["mine"]["org"]["id"])
    theirs = two_orgs["theirs"]
    assert_problem(caller.post("/kubeplatforms", json={
        "name": "sneaky", "organization": theirs["org"]["id"],
        "control_plane": {"provider": "eks"}, "infrastructure": {"cloud": {"provider": "aws"}}}),
        422, "body.organization")
    assert_problem(caller.post("/kubeclusters", json={
        "name": "sneaky", "platform": theirs["platform"]["name"], "environment": "dev",
        "version": "1.30"}), 422, "body.platform")


def test_scoped_admin_makes_only_tokens_of_its_organization(as_role, two_orgs):
    mine, theirs = two_orgs["mine"]["org"]["id"], two_orgs["theirs"]["org"]["id"]
    caller = as_role("admin", mine)
    assert_problem(caller.post("/tokens", json={"name": "x", "role": "reader",
                                                "organization": theirs}), 403)
    made = caller.post("/tokens", json={"name": "x", "role": "reader"}).get_json()
    assert made["organization"] == mine
    listed = caller.get("/tokens").get_json()["results"]
    assert {t["organization"] for t in listed} == {mine}


# -- bootstrap and the command line -----------------------------------------

def test_admin_token_from_the_environment_is_an_unscoped_admin(app, two_orgs):
    client = client_with(app, ADMIN_TOKEN)
    assert len(client.get("/organizations").get_json()["results"]) == 2
    assert client.post("/organizations", json={"title": "x"}).get_json()["created_by"] == "admin"


@pytest.mark.skipif(REAL_MONGO, reason="about the embedded store")
def test_embedded_store_makes_a_local_admin_token_and_files_it_off_a_terminal(
        capsys, caplog, tmp_path):
    from app import create_app
    from inventory.config import Config

    app = create_app(Config(ANNOUNCE=True, INVENTORY_ADMIN_TOKEN=None,
                            INVENTORY_DATA_DIR=str(tmp_path)))
    printed = capsys.readouterr()
    token = app.extensions["inventory.admin_token"]
    token_file = tmp_path / "admin-token"  # neither stdout nor stderr is a terminal here
    assert token_file.read_text() == token + "\n"
    assert token_file.stat().st_mode & 0o777 == 0o600
    assert str(token_file) in caplog.text  # the log says where
    assert "in memory" in caplog.text or "in-memory" in caplog.text or "journal" in caplog.text
    assert token not in caplog.text + printed.out + printed.err
    assert client_with(app, token).get("/organizations").status_code == 200


@pytest.mark.skipif(REAL_MONGO, reason="about the embedded store")
def test_the_local_admin_token_lasts_across_restarts_with_a_data_directory(tmp_path):
    from app import create_app
    from inventory.config import Config

    def start(check=None):
        app = create_app(Config(ANNOUNCE=True, INVENTORY_ADMIN_TOKEN=None,
                                INVENTORY_DATA_DIR=str(tmp_path)))
        try:
            return app.extensions["inventory.admin_token"], check and check(app)
        finally:
            app.extensions["inventory.store"].db.journal.close()  # as the process would at exit
    first, _ = start()
    # the same data directory: the same token, the file untouched, and it works
    second, status = start(lambda app: client_with(app, first).get("/organizations").status_code)
    assert second == first and status == 200
    assert (tmp_path / "admin-token").read_text() == first + "\n"
    (tmp_path / "admin-token").unlink()  # deleting it makes a new one at the next start
    third, _ = start()
    assert third != first and (tmp_path / "admin-token").read_text() == third + "\n"
    (tmp_path / "admin-token").chmod(0o644)
    with pytest.raises(RuntimeError, match="chmod 600"):
        start()


@pytest.mark.skipif(REAL_MONGO, reason="about the embedded store")
def test_writing_token_commands_refuse_on_the_embedded_store(runner):
    for args in (["tokens", "create", "--name", "x", "--role", "admin"],
                 ["tokens", "revoke", "tok_x"], ["tokens", "list"]):
        result = runner.invoke(args=args)
        assert result.exit_code != 0 and "MONGODB_URI" in result.output


def test_token_commands_work_on_a_database(app, runner, monkeypatch, client):
    app.config["MONGODB_URI"] = "mongodb://pretend"  # the store itself stays as it is
    result = runner.invoke(args=["tokens", "create", "--name", "ci", "--role", "reader"])
    assert result.exit_code == 0, result.output
    secret = result.output.strip().splitlines()[-1]
    assert client_with(app, secret).get("/organizations").status_code == 200
    listed = runner.invoke(args=["tokens", "list"]).output
    assert "ci" in listed and secret not in listed
    token_id = listed.split()[0]
    assert runner.invoke(args=["tokens", "revoke", token_id]).exit_code == 0
    assert client_with(app, secret).get("/organizations").status_code == 401


def test_wrong_role_is_403_in_error_format(as_role):
    body = assert_problem(as_role("reader").post("/organizations", json={"title": "x"}), 403)
    assert "admin" in body["detail"]



def test_deleting_an_organization_revokes_its_tokens(app, client, make_token, two_orgs):
    mine, theirs = two_orgs["mine"]["org"]["id"], two_orgs["theirs"]["org"]["id"]
    doomed = client_with(app, make_token("reader", mine)["token"])
    spared = client_with(app, make_token("reader", theirs)["token"])
    assert client.delete(f"/organizations/{mine}?force=true").status_code == 204
    assert_problem(doomed.get("/kubeclusters"), 401)
    assert spared.get("/kubeclusters").status_code == 200


def test_a_half_revoked_token_never_authenticates(app, client, store, monkeypatch):
    made = client.post("/tokens", json={"name": "leaving", "role": "reader"}).get_json()
    assert client_with(app, made["token"]).get("/organizations").status_code == 200

    def refused(*args, **kwargs):
        raise Unavailable()
    # the revoke marks the token, then the store refuses the rest (a full disk)
    monkeypatch.setattr(store.tokens.collection, "delete_many", refused)
    assert_problem(client.delete(f"/tokens/{made['id']}"), 503)
    monkeypatch.undo()
    assert store.tokens.collection.find_one({"_id": made["id"]})["_deleting"] is True
    assert_problem(client_with(app, made["token"]).get("/organizations"), 401)
    assert client.delete(f"/tokens/{made['id']}").status_code == 204  # finished, once
    assert_problem(client_with(app, made["token"]).get("/organizations"), 401)


def test_reads_go_on_when_a_tokens_last_use_cannot_be_written(app, client, store, monkeypatch):
    made = client.post("/tokens", json={"name": "reader", "role": "reader"}).get_json()
    reader = client_with(app, made["token"])

    def refused(*args, **kwargs):
        raise Unavailable()
    monkeypatch.setattr(store.tokens.collection, "update_one", refused)  # a full disk
    assert reader.get("/organizations").status_code == 200  # its first use: a write it skips
    assert reader.get("/organizations").status_code == 200
    monkeypatch.undo()
    assert store.tokens.collection.find_one({"_id": made["id"]})["last_used_on"] is None
