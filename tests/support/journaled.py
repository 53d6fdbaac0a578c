"""The embedded store over a data directory, as the journal's tests open
it: a database as a new process opens one (`open_database`, `reopened`),
the app over a directory, gunicorn as the Procfile runs it, and the two
fixtures that reach what no public API shows (`contents`, `store_lock`)."""
import os

import mongomock_ng

from app import create_app
from inventory.config import Config
from inventory.embedded.database import LockedDatabase
from inventory.embedded.journal import Journal
from tests.conftest import ADMIN_TOKEN
from tests.support.served import Gunicorn


def open_database(directory, fsync="no", **options):
    """A new embedded database over `directory`, as a new process opens it."""
    raw = mongomock_ng.MongoClient()["inventory"]
    return LockedDatabase(raw, Journal.open(str(directory), raw, fsync, **options))


def reopened(database, **options):
    """Close `database`'s journal; a new database over the same directory."""
    database.journal.close()
    return open_database(database.journal.directory, **options)


def ids(database):
    """The `_id`s of the collection `things`, sorted (of mixed types too)."""
    return sorted((document["_id"] for document in database.things.find()),
                  key=lambda key: (type(key).__name__, key))


def files(directory):
    """{name: (bytes, mtime)} of the directory's files but the lock (which
    holds its owner's pid)."""
    return {name: (open(directory / name, "rb").read(), os.stat(directory / name).st_mtime_ns)
            for name in sorted(os.listdir(directory)) if name != "lock"}


def make_app(directory):
    """The app, its store journaled in `directory`."""
    return create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN=ADMIN_TOKEN,
                             INVENTORY_DATA_DIR=str(directory), INVENTORY_FSYNC="no"))


def make_app_after(app, directory):
    """A new app over `directory` once `app`'s journal is closed (as a new process)."""
    app.extensions["inventory.store"].db.journal.close()
    return make_app(directory)


def journaled_gunicorn(directory):
    """gunicorn as the Procfile runs it, its store journaled in `directory`."""
    return Gunicorn(ADMIN_TOKEN, env={"INVENTORY_DATA_DIR": str(directory)},
                    log=directory.parent / "gunicorn-{port}.log", ready="/readyz")


def write_clusters(server, names, platform="p"):
    """Clusters created over HTTP, each acknowledged."""
    for name in names:
        status, _, body = server.request("POST", "/kubeclusters", {
            "name": name, "platform": platform, "environment": "dev", "version": "1.30.0"})
        assert status == 201, body


def first_estate(server):
    """An organization, its platform, 10 clusters and a token: what was acknowledged."""
    status, _, org = server.request("POST", "/organizations", {"title": "Acme"})
    assert status == 201
    assert server.request("POST", "/kubeplatforms", {
        "name": "p", "organization": org["id"], "control_plane": {"provider": "eks"},
        "infrastructure": {"cloud": {"provider": "aws"}}}).status == 201
    write_clusters(server, [f"before-{i}" for i in range(10)])
    status, _, token = server.request("POST", "/tokens", {"name": "scanner", "role": "reader"})
    assert status == 201
    return token["token"]
