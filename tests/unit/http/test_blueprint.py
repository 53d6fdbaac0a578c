"""inventory.http.blueprint, on its own: a route's path parameters, each
checked by its PathKey before the view runs (a 422 at `path.<name>`), a
parameter without one an error at start, one PathKey per name; an answer
left to its body schema names that schema in `Link`, one the view makes
itself (a 304, a stream) is its own. Every route of the service walked:
tests/unit/http/test_operations.py."""
import re

import flask_smorest
import pytest
from flask import Flask, Response
from flask.views import MethodView

from inventory.core.spec import PathKey
from inventory.http.blueprint import PATH_KEYS, Blueprint, path_parameters
from inventory.http.errors import RequestError
from inventory.http.operations import operation
from schemas.common import HealthSchema

# a key of this file's own, declared once (PATH_KEYS is the process's)
PROBE = PathKey("probe", "A probe's name.", "a probe name", (re.compile(r"^[a-z]{1,8}$"),), 8,
                "abc")


def test_a_rules_parameters_are_named_with_or_without_a_converter():
    assert path_parameters("/kubeclusters/<cluster>/scans/<int:scan>") == ["cluster", "scan"]
    assert path_parameters("/rollouts/<rollout>:approve") == ["rollout"]
    assert path_parameters("/healthz") == []


def test_a_path_parameter_without_a_path_key_does_not_start():
    blp = Blueprint("unkeyed", __name__)
    with pytest.raises(RuntimeError, match="no PathKey for widget"):
        @blp.route("/widgets/<widget>")
        class Widget(MethodView):
            @operation("getWidget", role="reader")
            def get(self, widget):
                return {}


def test_two_path_keys_of_one_name_do_not_start():
    Blueprint("first", __name__, path_keys=(PROBE,))
    Blueprint("again", __name__, path_keys=(PROBE,))  # the same key: fine
    other = PathKey("probe", "Another.", "another", (re.compile(r"^.*$"),), 9)
    with pytest.raises(RuntimeError, match="two PathKeys named 'probe'"):
        Blueprint("clash", __name__, path_keys=(other,))
    assert PATH_KEYS["probe"] is PROBE


@pytest.fixture
def probed():
    """A bare app serving a Blueprint of PROBE's routes (a view class and a
    view function), its RequestErrors answered as (location, status); the
    views note what they were called with in `app.calls`."""
    app = Flask(__name__)
    app.config.update(API_TITLE="t", API_VERSION="1", OPENAPI_VERSION="3.1.0",
                      ALLOWED_HOSTS=["localhost"])
    api = flask_smorest.Api(app)
    blp = Blueprint("probes", __name__, path_keys=(PROBE,))
    app.calls = []

    @blp.route("/probes/<probe>")
    class Probe(MethodView):
        @blp.response(200, HealthSchema)
        def get(self, probe):
            app.calls.append(probe)
            return {"status": probe}

    @blp.route("/made/<probe>")
    @blp.response(200, HealthSchema)
    def made(probe):
        app.calls.append(probe)
        return Response(status=304) if probe == "cached" else {"status": probe}

    api.register_blueprint(blp)
    app.register_error_handler(RequestError,
                               lambda error: ({"location": error.location}, error.status))
    return app


@pytest.mark.parametrize("path", ["/probes/{}", "/made/{}"])
def test_a_path_value_its_key_refuses_is_a_422_and_the_view_never_runs(probed, path):
    client = probed.test_client()
    for bad in ("Upper", "toolongname", "a-b"):
        refused = client.get(path.format(bad))
        assert refused.status_code == 422 and refused.get_json() == {"location": "path.probe"}
    assert probed.calls == []
    assert client.get(path.format("ok")).status_code == 200
    assert probed.calls == ["ok"]


def test_an_answer_left_to_its_body_schema_names_it_in_link(probed):
    answer = probed.test_client().get("/probes/ok")
    assert answer.headers["Link"] == '<http://localhost/schemas/Health.json>; rel="describedBy"'
    assert answer.get_json() == {"$schema": "http://localhost/schemas/Health.json",
                                 "status": "ok"}


def test_an_answer_the_view_makes_itself_is_its_own(probed):
    answer = probed.test_client().get("/made/cached")
    assert answer.status_code == 304 and "Link" not in answer.headers
    assert "Link" in probed.test_client().get("/made/fresh").headers
