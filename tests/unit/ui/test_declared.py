"""Console pages made from declarations: a column's value and link, the
declarations the console holds (each sortable column one its list serves,
each module a resource's), the menu made from them, and a resource the
console never saw getting its pages from one declaration."""
import json
import pathlib
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest

from inventory import resources
from inventory.ui import declared, pages
from inventory.ui.declared import Column, filtered, of, quoted
from tests.api.test_console_access import new_token, sign_in
from tests.conftest import ADMIN_TOKEN

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _all_declared():
    """Every Declared of the console's modules, by their module's name."""
    import importlib
    found = {}
    for name in declared.modules():
        module = importlib.import_module(name)
        found.update({f"{name}.{attribute}": value for attribute, value in vars(module).items()
                      if isinstance(value, declared.Declared)})
    return found


def test_of_reads_a_dotted_path_and_none_where_absent():
    record = {"name": "a", "support": {"status": "ending"}, "readiness": None}
    assert of("name")(record) == "a"
    assert of("support.status")(record) == "ending"
    assert of("readiness.status")(record) is None
    assert of("nowhere")(record) is None and of("support.x.y")(record) is None


def test_quoted_makes_a_filters_string_of_any_text():
    assert quoted('a"b\\c') == '"a\\"b\\\\c"'


def test_filtered_links_to_a_list_filtered_to_the_records_value():
    link = filtered("clusters", "platform")({"name": 'odd "name"'})
    parts = urlsplit(link)
    assert parts.path == "/ui/clusters"
    assert parse_qs(parts.query) == {"filter": ['platform="odd \\"name\\""']}


def test_a_column_shows_only_a_kind_of_cell_there_is():
    with pytest.raises(ValueError, match="shown='bold'"):
        Column("Name", of("name"), "bold")


def test_each_module_of_declarations_is_named_after_a_resource():
    names = {spec.name for spec in resources.SPECS}
    modules = declared.modules()
    assert {name.rsplit(".", 1)[1] for name in modules} <= names
    assert {"inventory.ui.clusters", "inventory.ui.rollouts", "inventory.ui.events"} <= set(modules)


def test_every_sortable_column_sorts_by_an_order_its_list_serves():
    for where, pages_of in _all_declared().items():
        for column in pages_of.columns:
            if column.sort:
                assert column.sort in pages_of.spec.orderings.fields, (where, column.label)


def test_the_menu_is_the_declared_lists_in_their_places():
    titles = [title for _, title, _, _ in pages.MENU]
    assert titles == ["Clusters", "Platforms", "Organizations", "Changes", "Rollouts",
                      "Tokens", "Webhooks"]


def test_a_readers_menu_leaves_out_the_admins_pages(app, client):
    reader = sign_in(app, new_token(client, "reader")["token"])
    nav = reader.get("/ui/").get_data(as_text=True).split("</nav>", 1)[0]
    assert 'href="/ui/clusters"' in nav and 'href="/ui/changes"' in nav
    assert 'href="/ui/tokens"' not in nav and 'href="/ui/webhooks"' not in nav
    admin = sign_in(app, ADMIN_TOKEN).get("/ui/").get_data(as_text=True).split("</nav>", 1)[0]
    assert 'href="/ui/tokens"' in admin and 'href="/ui/webhooks"' in admin


def test_a_record_page_shows_a_missing_value_as_the_column_says(app, client, inventory):
    inventory.cluster(name="bare")
    text = sign_in(app, ADMIN_TOKEN).get("/ui/clusters/bare").get_data(as_text=True)
    assert '<dt>Endpoint</dt><dd><span class="none">not known</span></dd>' in text
    assert '<dt>Description</dt><dd class="text"><span class="none">—</span></dd>' in text


def test_nothing_typed_into_a_declared_page_answers_a_500(app, client, inventory):
    """Every declared list (and its export), a record page of each, with
    random query parameters: an answer, never a 500."""
    import random
    import string
    inventory.cluster(name="typed")
    made = client.post("/webhooks", json={"url": "https://hooks.example.com/t"}).get_json()
    console = sign_in(app, ADMIN_TOKEN)
    paths = [path for _, _, path, _ in pages.MENU]
    paths += [f"{path}.csv" for path in paths] + ["/ui/clusters/typed",
                                                   f"/ui/webhooks/{made['id']}"]
    rng = random.Random(44)
    alphabet = string.printable + "\u00e9\u2028\U0001f600\x00"
    names = ["filter", "order_by", "limit", "continue", "x", ""]
    for _ in range(150):
        path = rng.choice(paths)
        params = [(rng.choice(names), "".join(rng.choice(alphabet)
                                               for _ in range(rng.randint(0, 30))))
                  for _ in range(rng.randint(0, 3))]
        assert console.get(path, query_string=params).status_code < 500, (path, params)
    for path in ("/ui/rollouts/" + "r" * 3000, "/ui/webhooks/%00", "/ui/tokens/x",
                 "/ui/platforms/x", "/ui/changes/x", "/ui/organizations.csv/x"):
        assert console.get(path).status_code < 500, path


# A resource's pages from one declaration, in a process of its own: routes
# are added to the console's blueprint before any app registers it.
NEW_PAGES = """
import json, re
from inventory.resources.platforms import views
from inventory.resources.platforms.spec import SPEC
from inventory.ui.declared import Column, Declared, declare, of
declare(Declared(spec=SPEC, views=views.listing, title="Every platform", singular="A platform",
                 path="every-platform", menu=99, export=True, filter_example='title="x"',
                 columns=(Column("Name", of("name"), link=True, sort="name"),
                          Column("Made", of("created_on"), "when")),
                 fields=(Column("Title", of("title")),
                         Column("Organization", of("organization"), "organization"))))
from app import create_app
from inventory.config import Config
app = create_app(Config(TESTING=True, INVENTORY_ADMIN_TOKEN="t", INVENTORY_DATA_DIR=""))
client = app.test_client()
form = client.get("/ui/sign-in").get_data(as_text=True)
token = re.search(r'name="form_token" value="([^"]+)"', form).group(1)
client.post("/ui/sign-in", data={"form_token": token, "token": "t"})
api = app.test_client()
api.environ_base["HTTP_AUTHORIZATION"] = "Bearer t"
org = api.post("/organizations", json={"title": "Acme"}).get_json()["id"]
made = api.post("/kubeplatforms", json={"name": "p1", "title": "First <b>", "organization": org,
                "control_plane": {"provider": "eks"},
                "infrastructure": {"cloud": {"provider": "aws"}}})
assert made.status_code == 201, made.get_data(as_text=True)
found = {}
for path in ("/ui/every-platform", "/ui/every-platform?order_by=name+desc",
             "/ui/every-platform?filter=nope%3D1", "/ui/every-platform/p1",
             "/ui/every-platform/nope", "/ui/every-platform.csv"):
    answer = client.get(path)
    found[path] = [answer.status_code, answer.mimetype, answer.get_data(as_text=True)]
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def new_pages():
    done = subprocess.run([sys.executable, "-c", NEW_PAGES], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_one_declaration_makes_a_list_page_in_the_menu(new_pages):
    status, _, text = new_pages["/ui/every-platform"]
    assert status == 200
    assert '<li><a href="/ui/every-platform">Every platform</a></li>' in text
    assert '<th scope="row"><a href="/ui/every-platform/p1">p1</a></th>' in text
    assert "<title>Every platform · Cluster inventory</title>" in text
    assert 'href="/ui/every-platform.csv"' in text and ">Export CSV</a>" in text
    assert "/ui/every-platform?order_by=name" in text  # its sortable column's header
    status, _, text = new_pages["/ui/every-platform?order_by=name+desc"]
    assert status == 200 and 'aria-sort="descending"' in text
    status, _, text = new_pages["/ui/every-platform?filter=nope%3D1"]
    assert status == 422 and 'id="filter-error"' in text


def test_one_declaration_makes_a_record_page(new_pages):
    status, _, text = new_pages["/ui/every-platform/p1"]
    assert status == 200
    assert "<h1>A platform <code>p1</code></h1>" in text
    assert "<dt>Title</dt><dd>First &lt;b&gt;</dd>" in text
    assert '<a href="/ui/every-platform">Every platform</a>' in text  # back to its list
    assert new_pages["/ui/every-platform/nope"][0] == 404


def test_one_declaration_makes_its_export(new_pages):
    status, mimetype, text = new_pages["/ui/every-platform.csv"]
    assert status == 200 and mimetype == "text/csv"
    assert text.splitlines()[0].startswith("name,") and "p1" in text
